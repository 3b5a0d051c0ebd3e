"""A traceback in the text names the files of its call path: the innermost frame
of the repository's own code leads the map, also when the traceback shows the
installed package (``site-packages/pkg/...``) of a repository that keeps its
code under a source root (``src/pkg/...``), which no path-suffix rule matches."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from repomap_helpers import ServiceFactory, write_repo

from bonsai.services.repomap import fusion
from bonsai.services.repomap.frames import frame_paths, frames_lane

SITE = "/home/u/venv/lib/python3.11/site-packages"
CHAIN = {  # three modules a call passes through (by callbacks: none imports another)
    "planner": "def plan_week(days, then):\n    return [then(d) for d in days]\n",
    "scheduler": "def book_slot(day, then):\n    return then(day)['slot']\n",
    "storage": "def load_rows(key, then):\n    return then({})[key]\n",
}


def traceback(*frames: tuple[str, str]) -> str:
    """A crash report whose traceback runs through ``frames`` (module, function),
    outermost first, from the installed package."""
    lines = ["It crashes since the upgrade:", "", "Traceback (most recent call last):"]
    lines.append('  File "/home/u/app/run.py", line 3, in <module>')
    for module, function in frames:
        lines.append(f'  File "{SITE}/pkg/{module}.py", line 5, in {function}')
    lines.append('  File "/usr/lib/python3.11/json/decoder.py", line 337, in decode')
    lines.append("KeyError: 'when'")
    return "\n".join(lines) + "\n"


def test_frames_are_read_in_order_from_each_kind_of_traceback() -> None:
    text = (
        "pytest says:\nsrc/pkg/a.py:12: in check\nsrc/pkg/b.py:40: AssertionError\n"
        "Traceback (most recent call last):\n"
        '  File "/x/pkg/c.py", line 3, in f\n'
        "File ~/env/lib/python3.10/site-packages/pkg/d.py:1423, in inner(ax)\n"
    )
    assert frame_paths(text) == [
        ["src/pkg/a.py", "src/pkg/b.py"],
        ["/x/pkg/c.py", "~/env/lib/python3.10/site-packages/pkg/d.py"],
    ]
    for hostile in ("a" * 65536, "a.py:" * 20000, 'File "' * 20000, "x." * 40000 + ":1"):
        frame_paths(hostile)  # linear: a long run of path characters is one start


def test_the_innermost_repository_frame_scores_most() -> None:
    files = ["src/pkg/mod.py", "src/pkg/sub/mod.py", "src/pkg/util.py", "tests/test_util.py"]
    text = (
        "Traceback (most recent call last):\n"
        f'  File "{SITE}/pkg/util.py", line 1, in a\n'
        f'  File "{SITE}/pkg/sub/mod.py", line 2, in b\n'
        '  File "/repo/tests/test_util.py", line 3, in test_b\n'  # a test: left out
        '  File "/usr/lib/python3.11/os.py", line 4, in c\n'  # not ours: names nothing
    )
    is_test = np.array([False, False, False, True])
    lane = frames_lane(files, text, is_test)
    # sub/mod.py (the innermost of ours) over util.py; pkg/mod.py shares only the basename
    assert lane[1] > lane[2] > 0
    assert lane[0] == 0 and lane[3] == 0


@pytest.fixture
def src_layout_repo(tmp_path: Path) -> Path:
    """write_repo's package under ``src/``, as pytest or flask keep theirs, with
    the three modules of ``CHAIN``."""
    root = write_repo(tmp_path / "repo")
    (root / "src").mkdir()
    shutil.move(root / "pkg", root / "src" / "pkg")
    for name, source in CHAIN.items():
        (root / "src" / "pkg" / f"{name}.py").write_text(source)
    return root


def _order(make_service: ServiceFactory, root: Path, text: str) -> list[str]:
    return [f.path for f in make_service(root).get(tokens=1024, mentions=text).files]


FORWARD = traceback(("planner", "plan_week"), ("scheduler", "book_slot"), ("storage", "load_rows"))
BACKWARD = traceback(("storage", "load_rows"), ("scheduler", "book_slot"), ("planner", "plan_week"))


@pytest.mark.parametrize(("text", "innermost"), [(FORWARD, "storage"), (BACKWARD, "planner")])
def test_the_innermost_frame_of_an_installed_package_leads_the_map(
    src_layout_repo: Path, make_service: ServiceFactory, text: str, innermost: str
) -> None:
    order = _order(make_service, src_layout_repo, text)
    assert order[0] == f"src/pkg/{innermost}.py"
    assert "src/pkg/scheduler.py" in order[:3]


def test_without_the_frames_lane_the_frame_order_is_not_seen(
    src_layout_repo: Path, make_service: ServiceFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The test above can fail: with the lane off, nothing reads which frame is
    the innermost, and the two tracebacks give one leader (or neither leads)."""
    monkeypatch.setattr(fusion, "W_FRAMES", 0.0)
    forward = _order(make_service, src_layout_repo, FORWARD)[0]
    backward = _order(make_service, src_layout_repo, BACKWARD)[0]
    assert (forward, backward) != ("src/pkg/storage.py", "src/pkg/planner.py")
