"""The skills and subagents indexes of a hostile repository (``.bonsai/skills/*/SKILL.md``,
``.bonsai/agents/*.md``) and its steering files, read into the system prompt of every turn.

A committed symlink must not put another file's front matter into the prompt,
and a FIFO (or a link to one, or to ``/dev/zero``) must not hang or fill the
daemon. A real daemon (``bonsai serve --stdio``) with the simulator.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from security_helpers import make_rig

from bonsai.services.project_context.indexes import MAX_READ_BYTES, skills_part, subagents_part
from bonsai.sim import Script
from bonsai.sim.script import Reply

OUTSIDE = "---\nname: stolen\ndescription: OUTSIDE-SENTINEL private notes\n---\nbody\n"


def hostile(root: Path) -> Path:
    ws = root / "ws"
    skills, agents = ws / ".bonsai" / "skills", ws / ".bonsai" / "agents"
    for folder in ("linked", "piped", "good", "huge"):
        (skills / folder).mkdir(parents=True)
    agents.mkdir()
    (root / "outside.md").write_text(OUTSIDE)
    os.mkfifo(root / "pipe")
    os.symlink(root / "outside.md", skills / "linked" / "SKILL.md")
    os.symlink(root / "pipe", skills / "piped" / "SKILL.md")
    (skills / "good" / "SKILL.md").write_text("---\nname: good\ndescription: Formats code.\n---\n")
    head = "---\nname: huge\ndescription: A big one.\n---\n"
    (skills / "huge" / "SKILL.md").write_text(head + "x" * (4 * MAX_READ_BYTES))
    os.mkfifo(agents / "fifo.md")
    os.symlink("/dev/zero", agents / "zero.md")
    (agents / "ok.md").write_text("---\nname: reviewer\ndescription: Reviews diffs.\n---\n")
    return ws


def test_links_out_pipes_and_devices_are_noted_never_read(tmp_path: Path) -> None:
    ws = hostile(tmp_path)
    skills = skills_part(ws)  # a read of a pipe blocks forever, /dev/zero never ends
    agents = subagents_part(ws)
    assert skills is not None and agents is not None
    assert "OUTSIDE-SENTINEL" not in skills.text and "stolen" not in skills.text
    assert "- linked: [bonsai: not read:" in skills.text and "leading outside" in skills.text
    assert "- piped: [bonsai: not read:" in skills.text
    assert "- good: Formats code." in skills.text and "- huge: A big one." in skills.text
    assert "- fifo: [bonsai: not read:" in agents.text and "not a regular file" in agents.text
    assert "- zero: [bonsai: not read:" in agents.text
    assert "- reviewer: Reviews diffs." in agents.text


async def test_a_turn_in_the_repository_finishes_and_leaks_nothing(
    home: Path, tmp_path: Path
) -> None:
    ws = hostile(tmp_path)
    async with make_rig(Script(steps=[Reply(text="Done.")]), home, ws) as rig:
        sid = await rig.session()
        events = await rig.turn(sid, "which skills do you have?", timeout=60)
        assert events[-1]["kind"] == "done", events[-1]
        assert "Formats code." in rig.requests_text(), "the good skill is in the prompt"
        assert rig.leaks("OUTSIDE-SENTINEL") == []


def test_a_huge_steering_file_is_read_only_up_to_its_cap(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with (ws / "AGENTS.md").open("wb") as file:  # sparse: no disk used
        file.write(b"Use tabs.\n")
        file.truncate(8 << 30)
    code = (
        "import resource, sys\n"
        "from pathlib import Path\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
        "from bonsai.services.project_context.steering import steering_parts\n"
        "print(steering_parts(Path(sys.argv[1]), None, 4096)[0].text[-200:])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(ws)], capture_output=True, text=True, timeout=120
    )  # reading the whole file needs 8 GiB: under a 1 GiB limit it cannot
    assert done.returncode == 0, done.stderr[-500:]
    assert "it has 8,589,934,592 bytes, the first 4,096 are shown" in done.stdout
