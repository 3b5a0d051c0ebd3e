"""The map lists its files best-ranked first, and an edit that adds names ranks
as a fresh build of the same tree does (the word-part cache grows in place)."""

from __future__ import annotations

from pathlib import Path

from repomap_helpers import ServiceFactory

from bonsai.core.repomap.render import GUTTER


def _text_files(text: str) -> list[str]:
    return [line.removesuffix(":") for line in text.splitlines() if not line.startswith(GUTTER)]


def test_text_lists_files_in_rank_order(repo: Path, make_service: ServiceFactory) -> None:
    service = make_service(repo)
    for mentions in ("", "obscure_checksum_routine overflows", "the widget renders twice"):
        service.forget_previous()
        result = service.get(tokens=600, mentions=mentions)
        ranks = [f.rank for f in result.files]
        assert len(result.files) > 3
        assert ranks == sorted(ranks, reverse=True)
        assert _text_files(result.text) == [f.path for f in result.files]
    named = service.get(tokens=600, mentions="obscure_checksum_routine overflows")
    assert _text_files(named.text)[0] == "tools/leaf_utility.py"


def test_edit_adding_names_ranks_like_a_fresh_build(
    repo: Path, tmp_path: Path, make_service: ServiceFactory
) -> None:
    task = "The frobnicated gizmo total is wrong after a refund"
    live = make_service(repo)
    before = live.get(tokens=400, mentions=task)  # the word parts exist before the edit
    target = repo / "pkg" / "mod_017.py"
    target.write_text(
        target.read_text() + "\n\ndef frobnicate_gizmo_total(refund):\n    return refund\n"
    )
    live.update_paths([target])
    live.forget_previous()
    after = live.get(tokens=400, mentions=task)
    fresh = make_service(repo, db=tmp_path / "fresh.db").get(tokens=400, mentions=task)
    assert after.text == fresh.text
    assert after.text != before.text
    assert _text_files(after.text)[0] == "pkg/mod_017.py"
