"""Random edit sequences through one live service (the word parts and the graph
updated incrementally, one file at a time) give the same map as a service built
from scratch on the same files, for task text whose words are parts of names."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from repomap_helpers import FILES, NAME, NAME_EDITS, PARTS, chars4

from bonsai.services.repomap import RepoMapService
from bonsai.settings import RepoMapSettings

_step = st.one_of(
    *NAME_EDITS,
    st.tuples(st.just("rename"), st.sampled_from(FILES), NAME),
    st.tuples(st.just("delete"), st.sampled_from(FILES), st.just("")),
)
_task = st.lists(st.sampled_from(PARTS), min_size=1, max_size=4).map(
    lambda words: "the " + " and ".join(words) + " are wrong after the update"
)


def _source(names: list[str]) -> str:
    out = ["from pkg.mod_0 import cart_total\n"]
    for i, name in enumerate(names):
        out.append(f"\n\ndef {name}_{i}(value):\n    return cart_total(value) + {i}\n")
    return "".join(out)


def _service(root: Path, db: Path) -> RepoMapService:
    return RepoMapService(root, db, RepoMapSettings(workers=1), chars4)


def _snapshot(service: RepoMapService, task: str) -> tuple[str, list[tuple[str, list[str]]]]:
    service.forget_previous()
    result = service.get(tokens=300, mentions=task)
    return result.text, [(f.path, [t.name for t in f.tags]) for f in result.files]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_step, min_size=1, max_size=6), _task)
def test_incremental_edits_equal_a_fresh_build(
    steps: list[tuple[str, str, str]], task: str
) -> None:
    tmp = Path(tempfile.mkdtemp())
    try:
        root = tmp / "repo"
        contents: dict[str, list[str]] = {rel: ["cart_total", "parse_header"] for rel in FILES}
        for rel, names in contents.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(_source(names))
        live = _service(root, tmp / "live.db")
        _snapshot(live, task)  # the word parts exist before the first edit
        try:
            for kind, rel, name in steps:
                path = root / rel
                names = contents.setdefault(rel, [])
                if kind == "delete":
                    path.unlink(missing_ok=True)
                    contents.pop(rel)
                else:
                    if kind == "add":
                        names.append(name)
                    elif kind == "drop" and names:
                        names.pop()
                    elif kind == "rename" and names:
                        names[-1] = name
                    path.write_text(_source(names))
                live.update_paths([rel])
                fresh = _service(root, tmp / f"fresh-{len(list(tmp.iterdir()))}.db")
                try:
                    assert _snapshot(live, task) == _snapshot(fresh, task)
                finally:
                    fresh.stop()
        finally:
            live.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
