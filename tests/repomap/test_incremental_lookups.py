"""What an edit carries over instead of recomputing equals what a fresh build
computes, after any sequence of edits:

* the word postings (the files holding each word a request looked up,
  ``postings.py``), patched per edit, equal a scan of the new graph's words,
  and the BM25 scores from them equal the scan's bit for bit and a fresh
  build's;
* the generated-file mark read from them names the files a fresh build names;
* the task's mentions, kept across edits that touch none of its words, equal
  the mentions a fresh service reads from the same text.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from repomap_helpers import FILES, NAME, NAME_EDITS, PARTS, chars4

from bonsai.services.repomap import RepoMapService
from bonsai.services.repomap.fusion import generated_files
from bonsai.services.repomap.lexical import lexical_scores, query_of
from bonsai.services.repomap.mentions import parse_mentions
from bonsai.services.repomap.postings import Postings
from bonsai.settings import RepoMapSettings

NEW_FILES = ["pkg/extra.py", "pkg/extra_parsetab.py"]  # the second is a generated file
_step = st.one_of(
    *NAME_EDITS,
    st.tuples(st.just("add"), st.sampled_from(NEW_FILES), NAME),
    st.tuples(st.just("rename"), st.sampled_from(FILES), NAME),
    st.tuples(st.just("doc"), st.sampled_from([*FILES, *NEW_FILES]), st.sampled_from(PARTS)),
    st.tuples(st.just("delete"), st.sampled_from([*FILES, *NEW_FILES]), st.just("")),
)
_task = st.lists(st.sampled_from([*PARTS, "extra", "checksum"]), min_size=1, max_size=4).map(
    lambda words: "the " + " and ".join(words) + " go wrong in `cart_total()` after the update"
)


def _source(names: list[str], doc: str) -> str:
    out = [f'"""Module about {doc}."""\nfrom pkg.mod_0 import cart_total\n']
    for i, name in enumerate(names):
        out.append(f"\n\ndef {name}_{i}(value):\n    return cart_total(value) + {i}\n")
    return "".join(out)


def _service(root: Path, db: Path) -> RepoMapService:
    return RepoMapService(root, db, RepoMapSettings(workers=1), chars4)


def _check(live: RepoMapService, fresh: RepoMapService, task: str) -> None:
    live.forget_previous()
    live.get(tokens=300, mentions=task)  # a request: the postings and mentions are used
    fresh.get(tokens=300, mentions=task)
    graph, other = live._state.current_graph(), fresh._state.current_graph()
    assert graph.files == other.files
    words = [*query_of(task), "cart", "module", "never-a-word"]
    kept = graph.postings.files_with(words)
    scanned = Postings(graph.core).files_with(words)
    built = other.postings.files_with(words)
    for word in words:
        assert kept[word].tolist() == scanned[word].tolist() == built[word].tolist(), word
    query = query_of(task)
    from_postings = lexical_scores(graph.core, query, graph.postings)
    assert from_postings.tobytes() == lexical_scores(graph.core, query).tobytes()
    assert from_postings.tobytes() == lexical_scores(other.core, query).tobytes()
    assert generated_files(graph) == generated_files(other)
    expected = parse_mentions(
        task, fresh._state.path_index(other), other.defined, fresh._state.word_parts(other)
    )
    assert live._state.mentions(graph, task) == expected


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_step, min_size=1, max_size=7), _task)
def test_carried_lookups_equal_a_fresh_build(steps: list[tuple[str, str, str]], task: str) -> None:
    tmp = Path(tempfile.mkdtemp())
    try:
        root = tmp / "repo"
        contents = {rel: (["cart_total", "parse_header"], "totals") for rel in FILES}
        for rel, (names, doc) in contents.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(_source(names, doc))
        live = _service(root, tmp / "live.db")
        live.get(tokens=300, mentions=task)  # postings and mentions exist before the first edit
        try:
            for n, (kind, rel, value) in enumerate(steps):
                path = root / rel
                if kind == "delete":
                    path.unlink(missing_ok=True)
                    contents.pop(rel, None)
                else:
                    names, doc = contents.get(rel, ([], "extras"))
                    if kind == "add":
                        names = [*names, value]
                    elif kind == "drop":
                        names = names[:-1]
                    elif kind == "rename" and names:
                        names = [*names[:-1], value]
                    elif kind == "doc":
                        doc = value
                    contents[rel] = (names, doc)
                    path.write_text(_source(names, doc))
                live.update_paths([rel])
                fresh = _service(root, tmp / f"fresh-{n}.db")
                try:
                    _check(live, fresh, task)
                finally:
                    fresh.stop()
        finally:
            live.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
