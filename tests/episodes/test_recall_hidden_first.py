"""The recall tool returns what the window lacks before what it still shows
(over real JSON-RPC: agent loop → pipeline → simulator)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bonsai.sim import Script
from bonsai.sim.script import Reply
from episodes.rig import call, make_rig, small_window, write_config
from episodes.two_topics import UNIQUE, make_workspace, reads, title


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path)


SCRIPT = Script(
    steps=[
        title("Parser"),
        *reads("parser0.txt", "parser1.txt", "parser2.txt"),
        Reply(text="The parser is fixed."),
        title("CLI"),
        *reads("cli0.txt", "cli1.txt"),
        Reply(tool_calls=[call("recall", query=UNIQUE)]),
        Reply(text="Recalled what I needed."),
    ]
)


async def test_recall_ranks_the_archived_output_above_the_message_still_sent(
    home: Path, workspace: Path
) -> None:
    write_config(home, small_window(24_000))
    async with make_rig(SCRIPT, home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, "Please fix the parser.")
        # short and still in the window: by bm25 alone it outranks the 60-line read
        await rig.turn(sid, f"Now add a CLI flag; keep {UNIQUE} in mind ({UNIQUE}).")
        assert f"keep {UNIQUE}" in rig.sent_text(-1), "the user message is still sent"
        assert "p1l30 " not in rig.sent_text(-1), "the read of parser1.txt is archived"
        hits = str(next(m for m in reversed(rig.sent(-1)) if m["role"] == "tool")["content"])
        heads = re.findall(r"^--- (\w+) ", hits, re.MULTILINE)
        assert heads[:2] == ["tool", "user"], hits[:600]
