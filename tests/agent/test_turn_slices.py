"""A turn's start in short slices of the daemon's loop (issue 19): its volatile tail's
``git status`` runs in a worker thread, so the daemon answers other requests while
git runs, and the request bytes a provider receives are the standard library's
encoding of the body (``body_json``: orjson only where its bytes are the same).
Real daemon over JSON-RPC, real simulator, a real git behind a gate."""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from agent_helpers import call, make_rig

from bonsai.services.providers import body_json
from bonsai.sim import Script
from bonsai.sim.script import Reply
from bonsai_testing import events_of, rpc

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed")

GATED_GIT = """#!/bin/sh
# git, but once the gate is armed the next `git status` waits (up to 4 s) for a release
for arg in "$@"; do
  if [ "$arg" = status ] && [ -e "{gate}/armed" ]; then
    rm -f "{gate}/armed"
    touch "{gate}/waiting"
    i=0
    while [ ! -e "{gate}/release" ] && [ $i -lt 40 ]; do sleep 0.1; i=$((i+1)); done
    [ -e "{gate}/release" ] || touch "{gate}/timed-out"
  fi
done
exec "{git}" "$@"
"""


def gated_git(tmp_path: Path) -> tuple[Path, Path]:
    """A ``bin`` folder whose ``git`` is the gated one, and its gate folder."""
    folder, gate = tmp_path / "bin", tmp_path / "gate"
    folder.mkdir()
    gate.mkdir()
    script = folder / "git"
    script.write_text(GATED_GIT.format(gate=gate, git=GIT))
    script.chmod(0o755)
    return folder, gate


async def appears(path: Path, within_s: float = 30) -> bool:
    for _ in range(int(within_s / 0.02)):
        if path.exists():
            return True
        await asyncio.sleep(0.02)
    return False


async def test_the_daemon_answers_while_a_turns_git_status_runs(
    home: Path, workspace: Path, tmp_path: Path
) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    folder, gate = gated_git(tmp_path)
    script = Script(steps=[Reply(text="one"), Reply(text="two")])
    path = f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"
    async with make_rig(script, home, workspace, PATH=path) as rig:
        sid = await rig.session()
        await rig.turn(sid, "first")  # the session's baseline is taken: git runs as it is
        (gate / "armed").touch()
        turn_id = (await rpc(rig.client, "bonsai/chat/send", {"sessionId": sid, "text": "go"}))[
            "turnId"
        ]
        assert await appears(gate / "waiting"), "the turn never ran git status"
        status = await rpc(rig.client, "bonsai/daemon/status")  # while git still waits
        (gate / "release").touch()
        await events_of(rig.client).wait_for(
            "bonsai/chat/event", lambda p: p["turnId"] == turn_id and p["kind"] == "done", 30
        )
        assert status is not None
        assert not (gate / "timed-out").exists(), "the daemon answered only once git returned"
        second = [r for r in rig.sim.requests if r.route == "openai"][-1]
        tail = second.body["messages"][-1]["content"]  # the volatile tail goes last
        assert tail.startswith("## Volatile state") and "Git: no commits yet." in tail


async def test_the_bytes_a_provider_receives_are_the_standard_librarys_encoding(
    home: Path, workspace: Path
) -> None:
    script = Script(
        steps=[
            Reply(text="Reading it.", tool_calls=[call("read_file", path="app.py")]),
            Reply(text="It returns 41 — «naïve» \u2028 fine."),
            Reply(text="ok"),
        ]
    )
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        for text in ('what does app.py return? "quoted" \\ tab\there é ✓ 🌳', "and \x01 again"):
            _, events = await rig.turn(sid, text)
            assert events[-1]["kind"] == "done", events
        sent = [r for r in rig.sim.requests if r.route == "openai"]
        assert len(sent) == 3
        for request in sent:
            expected = hashlib.sha256(body_json.standard(request.body)).hexdigest()
            assert request.body_sha256 == expected
        roles = [m["role"] for m in sent[1].body["messages"]]
        assert "tool" in roles  # the call and its result went too
