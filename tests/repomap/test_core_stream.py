"""A cold build's graph core, made while the files parse (``core_stream.py``), is
``build_core``'s, array for array, whatever order and batches the files come in;
tags that are not those it was given get no core from it (the build falls back)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from repomap_helpers import ServiceFactory, write_repo

from bonsai.services.repomap.core_stream import CoreStream
from bonsai.services.repomap.graph import GraphCore, build_core
from bonsai.services.repomap.indexer_core import FileResult
from bonsai.services.repomap.records import Definition, FileTags
from bonsai.settings import RepoMapSettings

NAME = st.sampled_from(["len", "open", "Widget", "parse_header", "_private", "x", "HTTPThing", "é"])
WORD = st.sampled_from(["cart", "total", "model", "brows", "default", "zeta"])


@st.composite
def file_tags(draw: st.DrawFn, path: str) -> FileTags:
    language = draw(st.sampled_from(["python", "javascript", None]))
    if language is None:
        return FileTags(path, None)
    names = draw(st.lists(NAME, max_size=4))
    defs = tuple(
        Definition(n, "function", line, f"def {n}()", 0) for line, n in enumerate(names, 1)
    )
    refs = draw(st.dictionaries(NAME, st.integers(1, 9), max_size=5))
    words = tuple(sorted(draw(st.sets(WORD, max_size=4))))
    return FileTags(path, language, defs, dict(sorted(refs.items())), words)


@st.composite
def repos(draw: st.DrawFn) -> dict[str, FileTags]:
    count = draw(st.integers(0, 12))
    return {f"d/f{i:02d}.py": draw(file_tags(f"d/f{i:02d}.py")) for i in range(count)}


def assert_same_core(got: GraphCore | None, want: GraphCore) -> None:
    assert got is not None
    for field in want._fields:
        a, b = getattr(got, field), getattr(want, field)
        if isinstance(b, np.ndarray):
            assert a.dtype == b.dtype, field
            assert np.array_equal(a, b), field
        else:
            assert a == b, field


def _results(tags: dict[str, FileTags], paths: list[str]) -> list[FileResult]:
    return [FileResult(p, "parsed", None, tags[p]) for p in paths]


@settings(max_examples=120, deadline=None)
@given(repos(), st.integers(0, 2**32 - 1), st.integers(1, 5))
def test_the_streamed_core_is_build_core_in_any_order_and_batches(
    tags: dict[str, FileTags], seed: int, batch: int
) -> None:
    order = list(tags)
    random.Random(seed).shuffle(order)
    stream = CoreStream()
    stream.add([FileResult("binary.bin", "parsed", None, None)])  # no tags: not in the map
    for i in range(0, len(order), batch):
        stream.add(_results(tags, order[i : i + batch]))
    assert_same_core(stream.core(tags), build_core(tags))


def test_other_tags_get_no_core() -> None:
    tags = {
        "a.py": FileTags("a.py", "python", (Definition("f", "function", 1, "def f()", 0),)),
        "b.py": FileTags("b.py", "python", (), {"f": 2}, ("cart",)),
    }
    stream = CoreStream()
    stream.add(_results(tags, ["a.py", "b.py"]))
    assert stream.core({"a.py": tags["a.py"]}) is None  # a file fewer
    assert stream.core({**tags, "c.py": FileTags("c.py", None)}) is None  # one more
    edited = tags["b.py"]._replace(references={"g": 1})
    assert stream.core({**tags, "b.py": edited}) is None  # tags changed since
    assert stream.core({**tags, "b.py": tags["b.py"]._replace()}) is None  # equal, not the same
    assert_same_core(stream.core(tags), build_core(tags))
    stream.add(_results({"a.py": tags["a.py"]._replace(references={"zz": 1})}, ["a.py"]))
    assert stream.core(tags) is None  # a file given twice: its first tags' names would linger


def test_a_cold_build_ranks_on_the_streamed_core_and_an_edit_before_the_map_falls_back(
    tmp_path: Path, make_service: ServiceFactory
) -> None:
    root = write_repo(tmp_path / "repo", modules=240)
    cold = make_service(root, tmp_path / "a.db", RepoMapSettings(workers=2))
    cold.build()
    core = cold._state.fresh_core
    assert core is not None
    assert_same_core(core(cold._state.tags), build_core(cold.tags))
    cold_map = cold.get(1024, (), "obscure_checksum_routine")
    assert cold._state.fresh_core is None  # used once, then let go
    warm = make_service(root, tmp_path / "a.db")
    warm_map = warm.get(1024, (), "obscure_checksum_routine")
    assert warm.graph_origin == "loaded"  # the snapshot saved from the streamed core
    assert warm_map.text == cold_map.text

    edited = make_service(root, tmp_path / "b.db", RepoMapSettings(workers=2))
    edited.build()
    leaf = root / "tools" / "leaf_utility.py"
    leaf.write_text(leaf.read_text() + "\n\ndef checksum_after_the_build():\n    return 0\n")
    edited.update_paths([leaf])
    fresh = make_service(root, tmp_path / "c.db", RepoMapSettings(workers=1))
    assert edited.get(1024).text == fresh.get(1024).text
    assert "checksum_after_the_build" in edited.get(2048, (), "checksum_after_the_build").text
