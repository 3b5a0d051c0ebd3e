"""Patching the graph after an edit gives exactly the arrays a fresh build gives,
whether or not the edit changes which names the file defines."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from repomap_helpers import ServiceFactory

from bonsai.services.repomap.graph import NO_NAME, RepoGraph, build_graph
from bonsai.services.repomap.graph_patch import patch_core, shifted
from bonsai.services.repomap.records import FileTags


def _same_graph(a: RepoGraph, b: RepoGraph) -> None:
    for name in ("sources", "targets", "weights"):
        assert getattr(a, name).tobytes() == getattr(b, name).tobytes(), name
    for name in ("fid", "node", "ndef", "line", "offsets"):
        assert getattr(a.table, name).tobytes() == getattr(b.table, name).tobytes(), name
    assert a.idents == b.idents
    rows = len(a.table.fid)
    assert [a.definition(r) for r in range(rows)] == [b.definition(r) for r in range(rows)]


def _edit_body(repo: Path) -> Path:
    target = repo / "pkg" / "mod_020.py"
    text = target.read_text().replace(
        "return core_helper(value) + core_helper(other)",
        "return core_helper(value) + len(str(other)) + function_001_one(other)",
    )
    target.write_text(text)
    return target


def _edit_definitions(repo: Path) -> Path:
    """Rename a function, add one with a name only referenced so far, drop the
    class, and start using a name nothing defines."""
    target = repo / "pkg" / "mod_020.py"
    text = target.read_text()
    text = text.replace("def function_020_two(", "def function_020_renamed(")
    text = text.replace("class Widget020:", "class Gadget020:")
    text += "\n\ndef load_settings(path):\n    return never_defined_anywhere(path)\n"
    target.write_text(text)
    return target


def _patched(service, before: dict[str, FileTags], path: str) -> RepoGraph:
    graph = build_graph(before)
    after = service.tags
    return RepoGraph(patch_core(graph.core, {path: after[path]}), after)


def test_body_edit_patch_equals_fresh_build(repo: Path, make_service: ServiceFactory):
    service = make_service(repo)
    service.build()
    before = service.tags
    service.update_paths([_edit_body(repo)])
    _same_graph(_patched(service, before, "pkg/mod_020.py"), build_graph(service.tags))


def test_definition_edit_patch_equals_fresh_build(repo: Path, make_service: ServiceFactory):
    service = make_service(repo)
    service.build()
    before = service.tags
    service.update_paths([_edit_definitions(repo)])
    patched = _patched(service, before, "pkg/mod_020.py")
    fresh = build_graph(service.tags)
    _same_graph(patched, fresh)
    assert patched.definers("Widget020") == ()  # the class is gone
    assert patched.definers("load_settings") == (
        fresh.file_index["pkg/core.py"],
        fresh.file_index["pkg/mod_020.py"],
    )


def test_new_and_removed_files_patch_equals_fresh_build(repo: Path, make_service: ServiceFactory):
    service = make_service(repo)
    service.build()
    before = service.tags
    created = repo / "pkg" / "mod_0205.py"  # sorts between two existing modules
    created.write_text("from pkg.core import CoreConfig\n\n\ndef fresh_module_entry():\n    pass\n")
    (repo / "pkg" / "mod_033.py").unlink()
    service.update_paths([created, repo / "pkg" / "mod_033.py"])
    after = service.tags
    graph = build_graph(before)
    core = patch_core(graph.core, {"pkg/mod_0205.py": after["pkg/mod_0205.py"]}, {"pkg/mod_033.py"})
    patched, fresh = RepoGraph(core, after), build_graph(after)
    assert patched.files == fresh.files and "pkg/mod_033.py" not in patched.files
    _same_graph(patched, fresh)
    assert patched.definers("fresh_module_entry") == (fresh.file_index["pkg/mod_0205.py"],)


def test_service_after_definition_edit_matches_fresh_service(
    repo: Path, tmp_path: Path, make_service: ServiceFactory
):
    live = make_service(repo, tmp_path / "live.db")
    mention = "Widget020 and function_020_renamed break load_settings"
    live.get(tokens=500, mentions=mention)
    live.update_paths([_edit_definitions(repo)])
    live.forget_previous()
    patched = live.get(tokens=500, mentions=mention)
    assert live.graph_origin == "patched"
    fresh = make_service(repo, tmp_path / "fresh.db").get(tokens=500, mentions=mention)
    assert "function_020_renamed" in patched.text
    assert patched.text == fresh.text
    assert patched.files == fresh.files


def test_service_after_body_edit_matches_fresh_service(
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


def test_service_after_creating_and_deleting_files_matches_fresh_service(
    repo: Path, tmp_path: Path, make_service: ServiceFactory
):
    live = make_service(repo, tmp_path / "live.db")
    mention = "new_helper_function is called from pkg/helpers.py"
    live.get(tokens=500, mentions=mention)
    (repo / "pkg" / "helpers.py").write_text("def new_helper_function():\n    return 1\n")
    (repo / "tools" / "leaf_utility.py").unlink()
    live.update_paths([repo / "pkg" / "helpers.py", repo / "tools" / "leaf_utility.py"])
    live.forget_previous()
    patched = live.get(tokens=500, mentions=mention)
    assert live.graph_origin == "patched"
    fresh = make_service(repo, tmp_path / "fresh.db").get(tokens=500, mentions=mention)
    assert "pkg/helpers.py:" in patched.text and "leaf_utility" not in patched.text
    assert patched.text == fresh.text
    assert patched.files == fresh.files


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 40), st.integers(1, 14), st.randoms(use_true_random=False))
def test_ids_shift_as_the_remap_table_says(n_old: int, n_fresh: int, rnd) -> None:
    """New names (or words) merged into a sorted list move every later id; the
    patch shifts the ids by compare-and-adds for a few new ones and by the remap
    table for more. Either way each id must land where the table says, and a
    file-only row's ``NO_NAME`` must stay ``NO_NAME`` (a wrong id would point a
    reference or a definition at another name)."""
    positions = sorted(rnd.sample(range(n_old + n_fresh), n_fresh))
    is_new = np.zeros(n_old + n_fresh, dtype=bool)
    is_new[positions] = True
    old_to_new = np.flatnonzero(~is_new).astype(np.int64)
    ids = np.array([rnd.randrange(-1, n_old) for _ in range(30)], dtype=np.int64)
    want = [int(old_to_new[i]) if i >= 0 else NO_NAME for i in ids.tolist()]
    got = shifted(ids, positions, old_to_new)
    assert got.dtype == ids.dtype and got.tolist() == want
    words = ids[ids >= 0].astype(np.int32)  # the files' word ids are 32-bit
    got32 = shifted(words, positions, old_to_new.astype(np.int32))
    assert got32.dtype == np.int32 and got32.tolist() == [want[i] for i in range(30) if ids[i] >= 0]


def test_a_first_name_in_a_repository_without_names_patches_like_a_build(
    tmp_path: Path, make_service: ServiceFactory
) -> None:
    """A repository whose files define and use nothing yet (every definition row
    a file-only row), then an edit that brings names: the patch equals a build."""
    root = tmp_path / "bare"
    root.mkdir()
    (root / "a.py").write_text("\n")
    (root / "notes.txt").write_text("nothing here\n")
    service = make_service(root)
    service.get(tokens=256)
    assert service._state.current_graph().core.names == []
    names = "".join(f"def brand_new_{k}(x):\n    return helper_{k}(x)\n\n" for k in range(12))
    (root / "a.py").write_text(names)
    service.update_paths([root / "a.py"])
    text = service.get(tokens=256, mentions="brand_new_3 is slow").text
    patched = service._state.current_graph()
    assert service.graph_origin == "patched"
    _same_graph(patched, build_graph(service.tags))
    assert "def brand_new_3(x):" in text
