"""The edit path's incremental parse (``edit_parse.py``): a file parsed from its
kept tree gets the tags a fresh parse gives, over random edit sequences in
every language with a fixture, and the service's edits really reuse the tree."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bonsai.services.repomap import RepoMapService
from bonsai.services.repomap.edit_parse import EditTrees, byte_edit
from bonsai.services.repomap.languages import language_for_path, load_language
from bonsai.services.repomap.tags import extract_tags
from bonsai.settings import RepoMapSettings

LANGS = Path(__file__).parent / "fixtures" / "langs"
SERVER = Path(__file__).parents[2] / "server" / "bonsai" / "services" / "repomap"
SEEDS = sorted(
    p
    for p in [*LANGS.iterdir(), SERVER / "graph.py", SERVER / "tags.py"]
    if language_for_path(p.name) and load_language(language_for_path(p.name) or "")
)
# what an edit puts in: code, halves of constructs, multi-byte text, broken bytes
PIECES = [
    b"\n\ndef added_function(x):\n    return x\n",
    b"class Added:\n    def method(self):\n        pass\n",
    b"function addedJs(a) { return a; }\n",
    b"(",
    b")",
    b"{",
    b"}",
    b'"""',
    b"# comment\n",
    b"    ",
    b"\n",
    "caf\u00e9 \u65e5\u672c = 1\n".encode(),
    b"\xff\xfe",
    b"",
]


@st.composite
def edit_sequences(draw: st.DrawFn) -> tuple[Path, list[tuple[float, float, bytes]]]:
    seed = draw(st.sampled_from(SEEDS))
    steps = draw(
        st.lists(
            st.tuples(
                st.floats(0, 1),
                st.floats(0, 0.2),
                st.one_of(st.sampled_from(PIECES), st.binary(max_size=12)),
            ),
            min_size=1,
            max_size=6,
        )
    )
    return seed, steps


def _apply(source: bytes, step: tuple[float, float, bytes], donor: bytes) -> bytes:
    at, span, piece = step
    start = int(at * len(source))
    end = min(len(source), start + int(span * len(source)))
    if not piece and end == start:  # a slice of another version: a moved block
        piece = donor[start // 2 : start // 2 + 40]
    return source[:start] + piece + source[end:]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edit_sequences())
def test_incremental_parse_gives_a_fresh_parses_tags(case: tuple[Path, list]) -> None:
    seed, steps = case
    language = language_for_path(seed.name)
    assert language is not None
    path = seed.name
    trees = EditTrees()
    source = original = seed.read_bytes()
    assert trees.extract(path, source, language) == extract_tags(path, source, language)
    for step in steps:
        source = _apply(source, step, original)
        assert trees.extract(path, source, language) == extract_tags(path, source, language)
    assert trees.reparsed == len(steps)  # every edit was parsed from the kept tree


@given(st.binary(max_size=40), st.binary(max_size=40))
def test_byte_edit_is_the_one_changed_span(old: bytes, new: bytes) -> None:
    start, old_end, new_end = byte_edit(old, new)
    assert old[:start] + new[start:new_end] + old[old_end:] == new
    assert old[:start] == new[:start] and old[old_end:] == new[new_end:]
    # the smallest: the span starts and ends on a difference
    assert start == len(old) or start == len(new) or old[start] != new[start] or start >= old_end


def test_kept_trees_are_bounded() -> None:
    trees = EditTrees(keep_files=2, keep_max_bytes=100)
    for name in ("a.py", "b.py", "c.py"):
        trees.extract(name, b"x = 1\n", "python")
    assert len(trees) == 2  # the least recently edited left
    trees.extract("a.py", b"x = 2\n", "python")
    assert trees.reparsed == 0  # a.py's tree was dropped: a fresh parse
    trees.extract("big.py", b"x = 1\n" * 50, "python")  # over the size bound: not kept
    trees.extract("big.py", b"x = 2\n" * 50, "python")
    assert trees.reparsed == 0


def test_service_edits_parse_from_the_kept_tree(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "lib.py").write_text("def helper():\n    return 1\n")
    (root / "app.py").write_text("from lib import helper\n\nhelper()\n")
    service = RepoMapService(root, tmp_path / "cache.db", RepoMapSettings(), len)
    try:
        service.build()
        for k in range(3):
            (root / "lib.py").write_text(
                "def helper():\n    return 1\n"
                + "".join(f"\n\ndef added_{j}():\n    helper()\n" for j in range(k + 1))
            )
            service.update_paths([root / "lib.py"])
        assert service._trees.reparsed == 2  # the first edit parsed afresh, then reused
        fresh = extract_tags("lib.py", (root / "lib.py").read_bytes(), "python")
        assert service.tags["lib.py"] == fresh
        assert [d.name for d in fresh.definitions] == ["helper", "added_0", "added_1", "added_2"]
        (root / "lib.py").unlink()
        service.update_paths([root / "lib.py"])
        assert len(service._trees) == 0  # a deleted file's tree is dropped
        text = service.get(tokens=512, mentions="helper").text
        assert "lib.py" not in text
    finally:
        service.stop()


def test_the_seeds_cover_the_languages() -> None:
    assert len({language_for_path(p.name) for p in SEEDS}) >= 8
