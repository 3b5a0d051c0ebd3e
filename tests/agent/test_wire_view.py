"""The wire view of bonsai/ctx/get is what the provider received: the system message with
every part (the repository map included), the tools, and every message, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

from agent_helpers import call, make_rig

from bonsai.sim import Script
from bonsai.sim.script import Reply
from bonsai_testing import rpc


def _canon(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


async def test_the_wire_view_equals_what_the_provider_received(home: Path, workspace: Path) -> None:
    for i in range(4):
        (workspace / f"mod{i}.py").write_text(f"def feature_{i}(x):\n    return x * {i}\n")
    steps = [
        Reply(text="Reading.", tool_calls=[call("read_file", path="mod2.py")]),
        Reply(text="feature_2 doubles."),
        Reply(text="Nothing else."),
    ]
    async with make_rig(Script(steps=steps), home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, "what does feature_2 do?")
        await rig.turn(sid, "anything else?")
        sent = [r for r in rig.sim.requests if r.route == "openai"][-1].body
        wire = await rpc(rig.client, "bonsai/ctx/get", {"sessionId": sid, "view": "wire"})

    system = sent["messages"][0]
    assert system["role"] == "system" and "## Repository map" in system["content"]
    assert wire["messages"][0] == system, "every system part, the repository map included"
    assert len(wire["messages"][0]["content"]) == len(system["content"])
    assert _canon(wire["tools"]) == _canon(sent["tools"]), "the tools as sent"
    # the log has grown by the final reply since; all before the volatile tail is as sent
    *body, tail = sent["messages"]
    assert tail["content"].startswith("## Volatile state")
    assert [_canon(x) for x in wire["messages"][: len(body)]] == [_canon(x) for x in body]
    assert wire["messages"][len(body)]["content"] == "Nothing else."
    assert wire["messages"][-1]["content"].startswith("## Volatile state")
