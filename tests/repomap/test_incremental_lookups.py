"""What an edit carries over instead of recomputing equals what a fresh build
computes, after any sequence of edits:

* the word postings (the files holding each word a request looked up,
  ``postings.py``), patched per edit, equal a scan of the new graph's words,
  and the BM25 scores from them equal the scan's bit for bit and a fresh
  build's;
* the generated-file mark read from them names the files a fresh build names;
* the task's mentions, kept across edits that touch none of its words, equal
  the mentions a fresh service reads from the same text;
* the ranking view's per-name arrays and reference edges, patched from the
  previous view's (``view_patch.py``), equal the ones derived from the same
  core, and so does every array derived from them (node numbers, the
  definition table, the PageRank transition whose shares are spliced from the
  previous view's), also where an edit moves a name across the definer and
  ubiquity thresholds (which reweighs its edges in files nobody edited).
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
from bonsai.services.repomap.graph import COMMON_DEFINERS, UBIQUITOUS_MIN_FILES, RepoGraph
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


BASE = "def helper_base(value):\n    return value\n"  # used by every module: edges nobody edits


def _source(names: list[str], doc: str) -> str:
    out = [f'"""Module about {doc}."""\nfrom pkg.base import helper_base\n']
    for i, name in enumerate(names):
        out.append(f"\n\ndef {name}_{i}(value):\n    return helper_base(value) + {i}\n")
    return "".join(out)


def _service(root: Path, db: Path) -> RepoMapService:
    return RepoMapService(root, db, RepoMapSettings(workers=1), chars4)


VIEW_ARRAYS = ("pair_name", "pair_fid", "n_definers", "n_users", "static", "node_of_name")
EDGE_ARRAYS = ("sources", "targets", "weights")


def _same_view(graph: RepoGraph) -> None:
    """The view equals the one derived from its core, array for array."""
    derived = RepoGraph(graph.core, graph.tags)
    for name in (*VIEW_ARRAYS, *EDGE_ARRAYS):
        mine, theirs = getattr(graph, name), getattr(derived, name)
        assert mine.dtype == theirs.dtype and mine.tobytes() == theirs.tobytes(), name
    for name in graph.table._fields:
        assert getattr(graph.table, name).tobytes() == getattr(derived.table, name).tobytes()
    assert graph.n_nodes == derived.n_nodes and graph.n_ref_edges == derived.n_ref_edges
    assert graph.ref_edges.offsets.tobytes() == derived.ref_edges.offsets.tobytes()
    # the PageRank transition (its shares spliced from the previous view's)
    mine, theirs = graph.transition, derived.transition
    for name in ("sources", "targets", "share", "dangling"):
        assert getattr(mine, name).tobytes() == getattr(theirs, name).tobytes(), name
    assert mine.split == theirs.split and (mine.halves is None) == (theirs.halves is None)
    for half, other in zip(mine.halves or (), theirs.halves or (), strict=True):
        for a, b in zip(half, other, strict=True):
            assert a.tobytes() == b.tobytes()


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
    _same_view(graph)


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
        (root / "pkg" / "base.py").write_text(BASE)
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


def test_patched_view_across_the_weight_thresholds(tmp_path: Path) -> None:
    """Edits that move a name across the ubiquity threshold (used by enough
    files) and the common-definer threshold (defined in more than five files)
    change its weight on every edge: the patched view still equals the derived
    one, and the weights really changed."""
    root = tmp_path / "repo"
    users = UBIQUITOUS_MIN_FILES  # exactly at the threshold: one fewer user crosses it
    definers = COMMON_DEFINERS + 1
    (root / "pkg").mkdir(parents=True)
    for k in range(users):
        defines = "def common(value):\n    return value\n\n\n" if k < definers else ""
        body = f"from pkg.util import shared\n\n\n{defines}def use_{k}(x):\n    return shared(x)\n"
        (root / "pkg" / f"mod_{k}.py").write_text(body)
    (root / "pkg" / "util.py").write_text("def shared(x):\n    return common(x)\n")
    service = _service(root, tmp_path / "live.db")
    try:
        service.get(tokens=300, mentions="shared")
        before = service._state.current_graph()
        edited = root / "pkg" / "mod_0.py"  # stops using ``shared`` and defining ``common``
        edited.write_text("def use_0(x):\n    return x\n\n\ndef brand_new_helper():\n    pass\n")
        service.update_paths([edited])
        service.get(tokens=300, mentions="shared")
        after = service._state.current_graph()
        assert after.counts is not before.counts and after.core.files is before.core.files
        _same_view(after)
        for name in ("shared", "common"):
            was, now = before.core.name_id(name), after.core.name_id(name)
            assert before.static[was] != after.static[now], name
    finally:
        service.stop()
