"""Agent turns end to end: pytest-lsp client ↔ real daemon ↔ provider simulator."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from agent_helpers import Rig, call, make_rig

from bonsai.sim import Script
from bonsai.sim.faults import Fault
from bonsai.sim.script import Reply
from bonsai_testing import BONSAI, close_client, events_of, rpc, sim_env, start_client

EDIT_SCRIPT = Script(
    steps=[
        Reply(text="Reading.", tool_calls=[call("read_file", path="app.py")]),
        Reply(
            tool_calls=[
                call("edit_file", path="app.py", old_string="return 41", new_string="return 42")
            ]
        ),
        Reply(text="Fixed the answer."),
    ]
)


@pytest.fixture
async def edit_rig(home: Path, workspace: Path) -> AsyncIterator[Rig]:
    async with make_rig(EDIT_SCRIPT, home, workspace) as rig:
        yield rig


async def test_multi_step_tool_turn_with_approval(edit_rig: Rig) -> None:
    sid = await edit_rig.session()
    _, events = await edit_rig.turn(sid, "make answer() return 42")
    kinds = [e["kind"] for e in events]
    assert kinds[-1] == "done", events
    assert kinds.count("toolCall") == 2 and kinds.count("toolResult") == 2
    assert "".join(e.get("text", "") for e in events if e["kind"] == "delta").endswith(
        "Fixed the answer."
    )
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(seqs), "events arrive in order"
    assert (edit_rig.workspace / "app.py").read_text() == "def answer():\n    return 42\n"
    [approval] = edit_rig.approvals
    assert approval["tool"] == "edit_file" and "+    return 42" in approval["diff"]

    log = await rpc(edit_rig.client, "bonsai/session/attach", {"sessionId": sid})
    roles = [m["role"] for m in log["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    # the model saw the tool result of the read in the next request
    second = edit_rig.sim.requests[1].body
    assert any(
        "return 41" in str(m.get("content")) for m in second["messages"] if m["role"] == "tool"
    )


async def test_denied_edit_changes_nothing(edit_rig: Rig) -> None:
    edit_rig.approve = False
    sid = await edit_rig.session()
    _, events = await edit_rig.turn(sid, "make answer() return 42")
    results = [e for e in events if e["kind"] == "toolResult"]
    assert results[1]["isError"] and "did not approve" in results[1]["result"]
    assert "return 41" in (edit_rig.workspace / "app.py").read_text()


async def test_provider_failure_is_a_clear_error_and_the_session_goes_on(
    home: Path, workspace: Path
) -> None:
    script = Script(
        steps=[Reply(text="recovered")], faults={i: Fault(kind="server_error") for i in range(1, 6)}
    )
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        _, events = await rig.turn(sid, "hello", timeout=60)
        assert events[-1]["kind"] == "error"
        assert "500" in events[-1]["message"] or "server" in events[-1]["message"].lower()
        _, events = await rig.turn(sid, "again", timeout=60)
        assert events[-1]["kind"] == "done"
        log = await rpc(rig.client, "bonsai/session/attach", {"sessionId": sid})
        assert [m["role"] for m in log["messages"]] == ["user", "user", "assistant"]


async def test_cancel_mid_stream_records_an_interrupted_reply(home: Path, workspace: Path) -> None:
    script = Script(steps=[Reply(text="word " * 400), Reply(text="next answer")], latency_ms=20)
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        turn_id = (await rpc(rig.client, "bonsai/chat/send", {"sessionId": sid, "text": "talk"}))[
            "turnId"
        ]
        events = events_of(rig.client)
        await events.wait_for("bonsai/chat/event", lambda p: p["kind"] == "delta")
        await asyncio.sleep(0.3)
        assert (await rpc(rig.client, "bonsai/chat/cancel", {"sessionId": sid}))["cancelled"]
        await events.wait_for(
            "bonsai/chat/event", lambda p: p["turnId"] == turn_id and p["kind"] == "error"
        )
        log = await rpc(rig.client, "bonsai/session/attach", {"sessionId": sid})
        assert log["messages"][-1]["status"] == "interrupted"
        partial = log["messages"][-1]["content"]
        assert partial.startswith("word") and len(partial) < len("word " * 400)
        _, after = await rig.turn(sid, "go on")
        assert after[-1]["kind"] == "done"
        sent = rig.sim.requests[-1].body["messages"]
        assert all(partial not in str(m.get("content")) for m in sent), "never sent as if complete"


async def test_big_output_is_truncated_and_paged_back(home: Path, workspace: Path) -> None:
    (workspace / "big.txt").write_text("".join(f"row {i:06d}\n" for i in range(8000)))
    script = Script(
        steps=[
            Reply(tool_calls=[call("bash", "call_big", command="cat big.txt")]),
            Reply(tool_calls=[call("read_tool_output", None, id="call_big", grep="row 004321")]),
            Reply(text="found it"),
        ]
    )
    async with make_rig(script, home, workspace) as rig:
        rig.approve = True
        sid = await rig.session()
        _, events = await rig.turn(sid, "show big.txt")
        assert events[-1]["kind"] == "done"
        sent = rig.sim.requests[1].body["messages"]
        big = next(m for m in sent if m.get("tool_call_id") == "call_big")
        assert len(big["content"]) < 25_000 and "read_tool_output" in big["content"]
        paged = next(
            m
            for m in rig.sim.requests[2].body["messages"]
            if m["role"] == "tool" and m.get("tool_call_id") != "call_big"
        )
        assert "row 004321" in paged["content"]


async def test_secrets_never_reach_the_model_or_the_database(home: Path, workspace: Path) -> None:
    key = "sk-proj-" + "A1b2C3d4" * 5
    (workspace / ".env").write_text(f"OPENAI_API_KEY={key}\nDEBUG=1\n")
    script = Script(steps=[Reply(tool_calls=[call("read_file", path=".env")]), Reply(text="ok")])
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, "what is in .env?")
        assert all(key not in json.dumps(r.body) for r in rig.sim.requests)
        await close_client(rig.client)
        rows = (
            sqlite3.connect(home / "bonsai.db").execute("SELECT content FROM messages").fetchall()
        )
        assert rows and all(key not in row[0] for row in rows)
        assert key.encode() not in (home / "bonsai.db").read_bytes()


async def test_ledger_totals_and_pin_survive_restart(edit_rig: Rig) -> None:
    sid = await edit_rig.session()
    await edit_rig.turn(sid, "make answer() return 42")
    ledger = await rpc(edit_rig.client, "bonsai/ctx/get", {"sessionId": sid, "view": "ledger"})
    totals = ledger["totals"]
    assert totals["used"] == sum(n["tokens"] for n in ledger["nodes"] if n["state"] != "dropped")
    assert totals["billedInput"] > 0 and 0 < totals["percent"] < 100
    # calibration moved from 1.0 toward what the simulator billed for our estimate
    ratio = totals["billedInput"] / totals["estimatedInput"]
    assert abs(totals["calibrationFactor"] - ratio) < abs(1.0 - ratio)
    sections = {n["section"] for n in ledger["nodes"]}
    assert {"system", "tools", "messages"} <= sections
    target = next(n for n in ledger["nodes"] if n["section"] == "messages" and n["kind"] != "user")
    pinned = await rpc(
        edit_rig.client, "bonsai/ctx/pin", {"sessionId": sid, "nodeId": target["id"]}
    )
    assert pinned["node"]["state"] == "pinned"
    changed = await events_of(edit_rig.client).wait_for(
        "bonsai/ctx/changed", lambda p: p["usable"] == totals["usable"]
    )  # the pin's own notification (earlier ones predate calibration)
    assert changed["sessionId"] == sid
    wire = await rpc(edit_rig.client, "bonsai/ctx/get", {"sessionId": sid, "view": "wire"})
    assert wire["messages"][-1]["role"] in ("assistant", "user")
    turns = await rpc(edit_rig.client, "bonsai/ctx/get", {"sessionId": sid, "view": "turns"})
    assert turns["turns"][0]["inputTokens"] > 0

    await close_client(edit_rig.client)
    env = sim_env(edit_rig.home, edit_rig.sim.openai_base_url)
    again = await start_client([*BONSAI, "serve", "--stdio"], env)
    try:
        ledger = await rpc(again, "bonsai/ctx/get", {"sessionId": sid, "view": "ledger"})
        assert next(n for n in ledger["nodes"] if n["id"] == target["id"])["state"] == "pinned"
    finally:
        await close_client(again)


async def test_save_preset_with_smol_still_chats(home: Path, workspace: Path) -> None:
    script = Script(steps=[Reply(text="small and thrifty")])
    async with make_rig(script, home, workspace) as rig:
        config = await rpc(rig.client, "bonsai/config/preset", {"preset": "save", "smol": True})
        assert config["effective"]["context"]["smol"] is True
        assert config["effective"]["tools"]["hidden"], "the save preset hides tools"
        sid = await rig.session()
        _, events = await rig.turn(sid, "hello")
        assert events[-1]["kind"] == "done", events[-1]
        sent = {t["function"]["name"] for t in rig.sim.requests[-1].body.get("tools", [])}
        assert sent and not sent & set(config["effective"]["tools"]["hidden"])
        assert "grep" not in sent, "smol sends the reduced tool set"


async def test_simulator_rules_see_the_users_words_not_the_volatile_tail(
    home: Path, workspace: Path
) -> None:
    from bonsai.sim.script import Rule

    script = Script(rules=[Rule(match="weather", reply=Reply(text="sunny, as scripted"))])
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        _, events = await rig.turn(sid, "what is the weather like?")
        text = "".join(e.get("text", "") for e in events if e["kind"] == "delta")
        assert text == "sunny, as scripted"
        last = rig.sim.requests[-1].body["messages"][-1]
        assert last["content"].startswith("## Volatile state"), "the tail is still sent last"


async def test_repomap_in_the_prefix_is_stable_across_unrelated_edits(
    home: Path, workspace: Path
) -> None:
    for i in range(6):
        (workspace / f"mod{i}.py").write_text(f"def feature_{i}(x):\n    return x * {i}\n")
    script = Script(steps=[Reply(text="one"), Reply(text="two")])
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, "what does feature_3 do?")
        (workspace / "mod5.py").write_text("def feature_5(x):\n    return x * 500  # tuned\n")
        await rig.turn(sid, "and then?")
        first, second = (r.body["messages"][0]["content"] for r in rig.sim.requests[:2])
        assert "feature_3" in first and "mod3.py" in first, "the map is in the system prefix"
        assert first == second, (
            "an edit that changes no definition leaves the prefix byte-identical"
        )


async def test_operator_suffix_ends_the_cacheable_system_prefix(
    home: Path, workspace: Path
) -> None:
    (home / "config.json").write_text(
        json.dumps({"context": {"operator_suffix": "Answer in French."}})
    )
    async with make_rig(Script(steps=[Reply(text="d'accord")]), home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, "hello")
        system = rig.sim.requests[0].body["messages"][0]["content"]
        assert system.rstrip().endswith("Answer in French."), "after the project context"
        assert "## Volatile state" not in system, "the volatile tail comes after, as a message"


async def test_loop_guard_nudges_then_stops_a_stuck_turn(home: Path, workspace: Path) -> None:
    steps = [Reply(tool_calls=[call("read_file", path="app.py", fresh=True)]) for _ in range(8)]
    steps.append(Reply(text="never reached"))
    async with make_rig(Script(steps=steps), home, workspace) as rig:
        sid = await rig.session()
        _, events = await rig.turn(sid, "look at app.py")
        results = [e["result"] for e in events if e["kind"] == "toolResult"]
        assert any("[bonsai]" in r for r in results), "an escalating nudge in the tool result"
        assert events[-1]["kind"] == "error" and events[-1]["message"], "then a hard stop"
        assert len(results) < 8, "the turn stopped before the model ran out of script"
        log = await rpc(rig.client, "bonsai/session/attach", {"sessionId": sid})
        calls = [c["id"] for m in log["messages"] for c in (m.get("toolCalls") or [])]
        answered = [m["toolCallId"] for m in log["messages"] if m["role"] == "tool"]
        assert sorted(calls) == sorted(answered), "pairing intact after the stop"


async def test_settings_api_names_the_tools_and_the_last_assembly(edit_rig: Rig) -> None:
    sid = await edit_rig.session()
    await edit_rig.turn(sid, "make answer() return 42")
    config = await rpc(edit_rig.client, "bonsai/config/get", {"workspace": str(edit_rig.workspace)})
    assert {"read_file", "edit_file", "bash", "recall", "memory_write"} <= set(
        config["availableTools"]
    )
    last = config["lastAssembly"]
    assert last["sessionId"] == sid and "sys:persona" in last["systemParts"]
    assert last["messages"] >= 5 and last["prefixHash"]
    cleared = await rpc(
        edit_rig.client, "bonsai/config/set", {"key": "context.preset", "value": None}
    )
    assert cleared["effective"]["context"]["preset"] == "balanced", "null clears an override"
