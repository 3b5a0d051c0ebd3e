"""No module of bonsai imports itself back, directly or through others (``./run lint``)."""

from __future__ import annotations

from bonsai.dev.import_cycles import LAZY, cycles, function_imports, import_graph, late_imports


def test_the_checker_finds_cycles_and_accepts_a_tree() -> None:
    ring = {"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"], "e": ["e2"], "e2": ["e"]}
    assert cycles(ring) == [["a", "b", "c"], ["e", "e2"]]
    assert cycles({"a": ["b", "c"], "b": ["c"], "c": []}) == []


def test_bonsai_has_no_import_cycle() -> None:
    graph = import_graph()
    assert "bonsai.session.chat" in graph and "bonsai.session.base" in graph["bonsai.session.chat"]
    assert cycles(graph) == []


def test_the_checker_finds_imports_inside_functions() -> None:
    source = """
import os
from bonsai.domain import Message
if os.name:
    from bonsai import settings
def build():
    from bonsai.session import chat
    import bonsai.agent.turn as turn
    from . import sibling
    import json
    return lambda: __import__("x")
async def later():
    from bonsai.errors import NotFound
"""
    found = sorted(function_imports(source))
    assert found == [
        (7, "bonsai.session"),
        (8, "bonsai.agent.turn"),
        (9, "."),
        (13, "bonsai.errors"),
    ]


def test_no_bonsai_module_imports_inside_a_function_but_the_lazy_ones() -> None:
    assert late_imports() == []
    for module, reason in LAZY.items():
        assert module.startswith("bonsai.cli") and reason, "only CLI code is lazy, with a reason"
