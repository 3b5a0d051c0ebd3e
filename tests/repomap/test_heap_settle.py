"""A long-lived (watching) service's warm start settles the heap for the first
edit (``heap.py``): what it made is frozen out of the collector's scans and one
view's worth of heap is kept touched; a one-shot service skips it. A user would notice if that kept the replaced views alive (memory
growing with every edit of a long session) or changed the map."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

from repomap_helpers import ServiceFactory, write_repo

from bonsai.services.repomap.heap import array_bytes

TASK = "function_007_two returns the wrong value for core_helper"


def test_a_watching_service_freezes_what_its_warm_start_made(
    tmp_path: Path, make_service: ServiceFactory
) -> None:
    root = write_repo(tmp_path / "repo", modules=80)
    one_shot = make_service(root, tmp_path / "one-shot.db")
    gc.unfreeze()
    one_shot.get(tokens=1024, mentions=TASK)
    assert gc.get_freeze_count() == 0  # a one-shot caller (the CLI) does not pay it
    service = make_service(root)
    service.start_watching()  # the daemon's service
    service.get(tokens=1024, mentions=TASK)
    frozen = gc.get_freeze_count()
    assert frozen > 0  # the tags, the name tables, the view: out of every later scan
    (root / "pkg" / "mod_005.py").write_text("def brand_new_function():\n    pass\n")
    service.update_paths([root / "pkg" / "mod_005.py"])
    service.get(tokens=1024, mentions=TASK)
    assert gc.get_freeze_count() <= frozen  # a patched view does not freeze again


def test_replaced_views_are_freed_over_fifty_edits(
    tmp_path: Path, make_service: ServiceFactory
) -> None:
    root = write_repo(tmp_path / "repo", modules=400)
    service = make_service(root)
    service.keep_for_edits()
    first = service.get(tokens=1024, mentions=TASK)
    assert gc.get_freeze_count() > 0
    graph = service._state.current_graph()
    view = array_bytes(graph, graph.core)
    assert view > 100_000  # a view worth measuring (a leak would be this much per edit)
    target = root / "pkg" / "mod_007.py"
    original = target.read_text()
    added = original + "\n\ndef a_new_name_for_the_map():\n    pass\n"
    tracemalloc.start()
    try:
        sizes = []
        for k in range(50):  # every edit adds or drops a name: a new view each time
            target.write_text(added if k % 2 == 0 else original)
            service.update_paths([target])
            service.get(tokens=1024, mentions=TASK)
            sizes.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
    assert service.graph_origin == "patched"
    growth = sizes[49] - sizes[9]
    assert growth < 4 * view, (growth, view)  # 40 views kept would be 40 * view
    target.write_text(original)
    service.update_paths([target])
    service.forget_previous()
    assert service.get(tokens=1024, mentions=TASK).text == first.text
