"""The first turn on a large workspace that is not mapped yet gets the build's
first map (the files the task names and the most imported ones, parsed first)
instead of waiting for every file; the build completes in the background and
the next turn gets the whole map."""

from __future__ import annotations

import re
from pathlib import Path

from agent_helpers import make_rig

from bonsai.sim import Script
from bonsai.sim.script import Reply

MODULES = 240  # + core.py, the leaf and app.py: a cold build of 243 files
TASK = "tools/leaf_utility.py: obscure_checksum_routine returns the wrong sum for empty data"
FILE_LINE = re.compile(r"^(\S+\.py):$", re.M)


def _write(ws: Path) -> None:
    pkg = ws / "pkg"
    pkg.mkdir()
    (pkg / "core.py").write_text("def core_helper(value):\n    return value\n")
    for k in range(MODULES):
        other = (k * 7 + 1) % MODULES
        (pkg / f"mod_{k:03d}.py").write_text(
            "from pkg.core import core_helper\n"
            f"from pkg.mod_{other:03d} import function_{other:03d}\n\n\n"
            f"def function_{k:03d}(value):\n    return core_helper(value)\n"
        )
    (ws / "tools").mkdir()
    (ws / "tools" / "leaf_utility.py").write_text(
        "def obscure_checksum_routine(data: bytes) -> int:\n    return sum(data) % 251\n"
    )


def _map_files(body: dict) -> list[str]:
    system = body["messages"][0]["content"]
    assert "## Repository map" in system
    section = system.split("## Repository map", 1)[1]
    return FILE_LINE.findall(section)


async def test_a_cold_first_turn_gets_a_first_map_and_the_next_the_whole_map(
    home: Path, workspace: Path
) -> None:
    _write(workspace)
    steps = [Reply(text="Looking."), Reply(text="Done.")]
    async with make_rig(Script(steps=steps), home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, TASK, timeout=120)
        await rig.turn(sid, "and the rest?", timeout=120)  # its words name nothing
        sent = [r.body for r in rig.sim.requests if r.route == "openai"]
    first, second = _map_files(sent[0]), _map_files(sent[1])
    assert first[0] == "tools/leaf_utility.py"  # named by the task: parsed and ranked first
    assert "pkg/core.py" in first  # imported by every module
    assert len(first) <= 32  # the first map: one file in ten (at least 32) parsed first
    assert len(second) > len(first)  # the build completed: the whole map
