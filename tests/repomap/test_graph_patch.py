"""Patching the graph after an edit gives exactly the arrays a fresh build gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from repomap_helpers import ServiceFactory

from bonsai.services.repomap.graph import build_graph
from bonsai.services.repomap.graph_patch import patch_graph
from bonsai.services.repomap.ranking import build_table, patch_table


def _same_graph(a, b) -> None:
    for name in ("sources", "targets", "weights"):
        assert getattr(a, name).tobytes() == getattr(b, name).tobytes(), name
    assert a.refs.offsets.tobytes() == b.refs.offsets.tobytes()
    assert a.refs.static.tobytes() == b.refs.static.tobytes()
    assert a.idents == b.idents and a.definers == b.definers


def _edit_body(repo: Path) -> Path:
    target = repo / "pkg" / "mod_020.py"
    text = target.read_text().replace(
        "return core_helper(value) + core_helper(other)",
        "return core_helper(value) + len(str(other)) + function_001_one(other)",
    )
    target.write_text(text)
    return target


def test_patch_equals_fresh_build(repo: Path, make_service: ServiceFactory):
    service = make_service(repo)
    service.build()
    before = service.tags
    graph = build_graph(before)
    table = build_table(graph)
    service.update_paths([_edit_body(repo)])
    after = service.tags
    old = {"pkg/mod_020.py": before["pkg/mod_020.py"]}
    patched = patch_graph(graph, old, after)
    assert patched is not None
    fresh = build_graph(after)
    _same_graph(patched, fresh)
    fresh_table = build_table(fresh)
    patched_table = patch_table(table, patched, old)
    for i in range(4):
        np.testing.assert_array_equal(patched_table[i], fresh_table[i])
    assert patched_table.defs == fresh_table.defs


def test_new_definition_name_needs_rebuild(repo: Path, make_service: ServiceFactory):
    service = make_service(repo)
    service.build()
    before = service.tags
    target = repo / "pkg" / "mod_020.py"
    target.write_text(target.read_text() + "\ndef a_brand_new_name():\n    pass\n")
    service.update_paths([target])
    old = {"pkg/mod_020.py": before["pkg/mod_020.py"]}
    assert patch_graph(build_graph(before), old, service.tags) is None


def test_service_after_edit_matches_fresh_service(
    repo: Path, tmp_path: Path, make_service: ServiceFactory
):
    live = make_service(repo, tmp_path / "live.db")
    live.get(tokens=500, mentions="Widget020")
    live.update_paths([_edit_body(repo)])
    live.forget_previous()
    patched = live.get(tokens=500, mentions="Widget020")
    fresh = make_service(repo, tmp_path / "fresh.db").get(tokens=500, mentions="Widget020")
    assert patched.text == fresh.text
    assert patched.files == fresh.files
