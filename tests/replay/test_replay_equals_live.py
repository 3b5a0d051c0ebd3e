"""A recorded session replayed equals the same session driven live through the
daemon against the simulator, request for request.

Live: a real daemon runs a scripted turn (a big read cut at execution time and
spilled, a small read and a re-read of it, a bulky command cut too, a final
answer) against the provider simulator, which records
every request. The recording: that session as an agent records it — the tool
outputs whole (the spilled text where the daemon cut one), the calls as made.
Replay: the recording through ``replay_steps`` with the same settings. Every
request's conversation (everything after the system prompt, on the OpenAI
wire, less the daemon's own system parts) is the same, byte for byte: the cut outputs with their
``read_tool_output`` markers, the calls and the answers.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "agent"))
from agent_helpers import call, make_rig  # noqa: E402

from bonsai.services.importers import import_file  # noqa: E402
from bonsai.services.providers.factory import FLAVOURS  # noqa: E402
from bonsai.services.providers.openai_body import wire_message  # noqa: E402
from bonsai.services.replay import build_config, open_readonly, replay_steps  # noqa: E402
from bonsai.services.replay.source import source_from_messages  # noqa: E402
from bonsai.services.store.sessions import SessionStore  # noqa: E402
from bonsai.services.store.turns import ToolOutputStore  # noqa: E402
from bonsai.sim import Script  # noqa: E402
from bonsai.sim.script import Reply  # noqa: E402

BIG = "".join(f"def f{k}(x):\n    return x * {k}  # {'padding ' * 6}\n" for k in range(900))
SMALL = "def small():\n    return 1\n"
VOLATILE = "## Volatile state"
SCRIPT = Script(
    steps=[
        Reply(text="Reading the big module.", tool_calls=[call("read_file", "c1", path="big.py")]),
        Reply(tool_calls=[call("read_file", "c2", path="small.py")]),
        Reply(
            text="Once more.", tool_calls=[call("read_file", "c3", path="small.py", fresh=False)]
        ),
        Reply(tool_calls=[call("bash", "c4", command="seq 1 9000")]),
        Reply(text="Done: nothing to change."),
    ]
)


def _conversation(messages: list[dict[str, object]]) -> list[dict[str, object]]:
    """A request's messages without the daemon's own system parts: the system
    prompt, and its volatile tail (sent last, as a user message, to keep the
    cached prefix stable)."""
    out = [m for m in messages if m["role"] != "system"]
    last = out[-1] if out else {}
    if last.get("role") == "user" and str(last.get("content", "")).startswith(VOLATILE):
        out = out[:-1]
    return out


def _recording(home: Path, session_id: str, path: Path) -> list[str]:
    """Write the live session as an agent records it; return its message ids."""
    conn = open_readonly(home)
    try:
        stored = SessionStore(conn).messages(session_id)
        outputs = ToolOutputStore(conn)
        records: list[dict[str, object]] = []
        for item in stored:
            message = item.message
            record: dict[str, object] = {"role": message.role, "content": message.content}
            if message.tool_calls:
                record["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments},
                    }
                    for c in message.tool_calls
                ]
            if message.role == "tool":
                call_id = message.tool_call_id or ""
                spilled = outputs.get(session_id, call_id)
                text = spilled if spilled is not None else message.content
                record |= {"content": text, "tool_call_id": call_id}
            records.append(record)
    finally:
        conn.close()
    path.write_text(json.dumps(records), encoding="utf-8")
    return [item.message_id for item in stored]


async def test_a_recorded_session_replays_request_for_request_as_it_ran_live(
    home: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "big.py").write_text(BIG, encoding="utf-8")
    (workspace / "small.py").write_text(SMALL, encoding="utf-8")
    async with make_rig(SCRIPT, home, workspace) as rig:
        sid = await rig.session()
        _, events = await rig.turn(sid, "Check the modules for a bug.", timeout=60)
        assert events[-1]["kind"] == "done", events
        live = [r.body for r in rig.sim.requests]
    assert len(live) == 5

    recording = tmp_path / "recorded.json"
    ids = _recording(home, sid, recording)
    imported = import_file(recording)
    assert imported.format == "openai"
    source = source_from_messages(imported.messages, ids)
    rows = replay_steps(source, build_config(model="gpt-4o-mini"))
    assert len(rows) == len(live)

    flavour = FLAVOURS["sim"]  # the provider the rig ran live
    for step, (row, body) in enumerate(zip(rows, live, strict=True)):
        sent = _conversation(body["messages"])
        replayed = [wire_message(m, i, flavour) for i, m in enumerate(row.assembly.messages)]
        assert replayed == sent, f"request {step} differs"

    # what made it worth testing: both bulky outputs were cut, with the spill marker,
    # in the first request that carried each (a later one may stub the old output)
    def first_sent(call_id: str) -> str:
        for body in live:
            for m in body["messages"]:
                if m["role"] == "tool" and m.get("tool_call_id") == call_id:
                    return str(m["content"])
        raise AssertionError(f"{call_id} was never sent")

    assert 'read_tool_output({"id": "c1"' in first_sent("c1")
    assert 'read_tool_output({"id": "c4"' in first_sent("c4")
    assert len(first_sent("c1")) < len(BIG)
    recorded = json.loads(recording.read_text(encoding="utf-8"))
    assert len(recorded[2]["content"]) > len(BIG)  # the recording holds the whole output
