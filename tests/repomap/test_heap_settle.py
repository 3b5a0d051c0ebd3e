"""A long-lived (watching) service's warm start settles the heap for the first
edit (``heap.py``): what it made is frozen out of the collector's scans and one
view's worth of heap is kept touched; a one-shot service skips it. A user would notice if that kept the replaced views alive (memory
growing with every edit of a long session) or changed the map."""

from __future__ import annotations

import gc
import json
import os
import platform
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
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


FAULTS_SCRIPT = """
import json, resource, sys
from pathlib import Path
from repomap_helpers import chars4, write_repo
from bonsai.services.repomap import RepoMapService
from bonsai.services.repomap.heap import array_bytes
from bonsai.settings import RepoMapSettings
work, cold = Path(sys.argv[1]), sys.argv[2] == "cold"
root = write_repo(work / "repo", modules=2000) if cold else work / "repo"
service = RepoMapService(root, work / "c.db", RepoMapSettings(workers=1), chars4)
if cold:  # fills the cache and the snapshot: the next process starts warm
    service.get(tokens=1024)
    service.stop()
    sys.exit(0)
service.keep_for_edits()
task = "function_007_two returns the wrong value for core_helper"
service.get(tokens=1024, mentions=task)  # the warm start's first map settles
graph = service._state.current_graph()
pages = array_bytes(graph, graph.core) // resource.getpagesize()
target = root / "pkg" / "mod_007.py"
original = target.read_text()
faults = []
for k in range(4):  # each adds a name never seen: a new core and a new view
    added = "".join(f"\\n\\ndef a_new_name_{j}():\\n    pass\\n" for j in range(k + 1))
    target.write_text(original + added)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    service.update_paths([target])
    service.get(tokens=1024, mentions=task)
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
service.stop()
print(json.dumps({"pages": pages, "faults": faults}))
"""


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="the heap is kept with glibc's mallopt only",
)
def test_the_first_edits_adding_names_find_their_heap_ready(tmp_path: Path) -> None:
    """The settled reserve covers what the first edits adding new names allocate
    (a new core and a new view, with their temporaries, while the old ones are
    alive): they fault almost no fresh page. With one view's worth reserved,
    the second such edit faulted ~80% of a view's pages on this repository."""
    tests = Path(__file__).resolve().parent
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(tests.parents[1] / "server"), str(tests)])
    )
    for mode in ("cold", "warm"):  # a process each: the warm one's heap is its own
        done = subprocess.run(
            [sys.executable, "-c", FAULTS_SCRIPT, str(tmp_path), mode],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=True,
        )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["pages"] > 400  # a view worth measuring (~2.3 MB)
    assert sum(result["faults"]) < result["pages"] // 4, result
