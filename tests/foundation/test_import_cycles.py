"""No module of bonsai imports itself back, directly or through others (``./run lint``)."""

from __future__ import annotations

from bonsai.dev.import_cycles import cycles, import_graph


def test_the_checker_finds_cycles_and_accepts_a_tree() -> None:
    ring = {"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"], "e": ["e2"], "e2": ["e"]}
    assert cycles(ring) == [["a", "b", "c"], ["e", "e2"]]
    assert cycles({"a": ["b", "c"], "b": ["c"], "c": []}) == []


def test_bonsai_has_no_import_cycle() -> None:
    graph = import_graph()
    assert "bonsai.session.chat" in graph and "bonsai.session.base" in graph["bonsai.session.chat"]
    assert cycles(graph) == []
