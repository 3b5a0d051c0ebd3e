"""Tool support checked, not assumed, against real servers.

Three servers answer the same question differently: llama-cpp-python's
``llama_cpp.server`` with the model's own chat template drops ``tools`` and
publishes nothing about them (only a probe finds out); the same server with
``--chat_format chatml-function-calling`` calls tools (only when ``tool_choice``
is sent); llama.cpp's ``llama-server`` says in ``/props`` that SmolLM2's
template has no tool support. The assertions are about notices, probes, the
request on the wire and the ledger, never about what the model writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from llama_servers import RunningServer
from real_rig import RealRig, assert_paired, real_rig, write_config

from bonsai_testing import events_of, rpc

pytestmark = pytest.mark.timeout(420)
TEXT_MODE = "followed bonsai's text tool protocol in a probe"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("def answer():\n    return 41\n")
    return ws


def tool_notices(events: list[dict[str, Any]]) -> list[str]:
    return [e["message"] for e in events if e["kind"] == "notice" and "tools" in e["message"]]


async def requests_of_last_turns(rig: RealRig, sid: str) -> int:
    """Model requests the session made so far: one assistant message each."""
    return sum(1 for m in await rig.log(sid) if m["role"] == "assistant")


async def assert_wire_matches_mode(rig: RealRig, sid: str, text_mode: bool) -> None:
    """The request as sent: native tools, or the text protocol in the system prompt."""
    wire = await rig.ledger(sid, "wire")
    system = " ".join(str(b.get("text", "")) for b in wire.get("system") or [])
    system += " ".join(str(m.get("content")) for m in wire["messages"] if m["role"] == "system")
    if text_mode:
        assert not wire.get("tools"), "the text protocol sends no native tools"
        assert "<tool_call>" in system
    else:
        assert wire.get("tools"), "native tools are on the request"
        assert "<tool_call>" not in system


async def test_a_server_that_drops_tools_is_found_out_by_one_probe(
    py_plain_server: RunningServer, home: Path, workspace: Path
) -> None:
    write_config(home)
    server = py_plain_server
    async with real_rig(server.base_url, server.model, home, workspace) as rig:
        sid = await rig.session()
        before = server.chat_requests()
        first = await rig.turn(sid, "Read app.py.")
        assert first[-1]["kind"] == "done", first[-1]
        probes = server.chat_requests() - before - await requests_of_last_turns(rig, sid)
        # tool_choice "required" answered with text, then the text-protocol probe
        assert probes == 2, probes
        notices = tool_notices(first)
        assert len(notices) == 1, notices
        assert 'probe: a request with tool_choice "required" got text' in notices[0]
        assert "cannot call tools" in notices[0]
        text_mode = TEXT_MODE in notices[0]
        await assert_wire_matches_mode(rig, sid, text_mode)
        # the facts are cached: a second turn and a second session probe nothing again
        mid = server.chat_requests()
        steps = await requests_of_last_turns(rig, sid)
        second = await rig.turn(sid, "Thanks.")
        assert second[-1]["kind"] == "done", second[-1]
        assert not tool_notices(second), "told once per session"
        assert server.chat_requests() - mid == await requests_of_last_turns(rig, sid) - steps
        other = await rig.session()
        mid = server.chat_requests()
        third = await rig.turn(other, "Read app.py.")
        assert third[-1]["kind"] == "done", third[-1]
        assert server.chat_requests() - mid == await requests_of_last_turns(rig, other)
        assert tool_notices(third) == notices, "each session is told, from the cached facts"
        notes = (await rig.ledger(sid))["totals"]["windowNotes"]
        assert notices[0] in notes, "the ledger keeps the notice"
        assert_paired(await rig.log(sid))


async def test_the_function_calling_chat_format_is_found_to_call_tools(
    py_server: RunningServer, home: Path, workspace: Path
) -> None:
    write_config(home, context={"output_reserve": 160})
    async with real_rig(py_server.base_url, py_server.model, home, workspace) as rig:
        sid = await rig.session()
        before = py_server.chat_requests()
        turn_id = await rig.send(sid, "Use the read_file tool to read app.py.")
        # this grammar lets a tiny model call tools forever: once one call has its
        # result, the turn is cancelled (a model that answers in text ends it itself)
        await events_of(rig.client).wait_for(
            "bonsai/chat/event",
            lambda p: p["turnId"] == turn_id and p["kind"] in ("done", "error", "toolResult"),
            240,
        )
        await rpc(rig.client, "bonsai/chat/cancel", {"sessionId": sid})
        events = await rig.wait(turn_id)
        probes = py_server.chat_requests() - before - await requests_of_last_turns(rig, sid)
        # "required" is refused by this chat format (HTTP 500), a named tool_choice gets a
        # call, then a streamed "auto" request (it breaks off when the model picks a tool);
        # plus the step that may be in flight, unanswered, when the turn was cancelled
        assert probes in (3, 4), probes
        notices = tool_notices(events)
        assert not any("cannot call tools" in n for n in notices), notices
        assert len([n for n in notices if "cannot stream a tool call" in n]) <= 1, notices
        await assert_wire_matches_mode(rig, sid, text_mode=False)
        # steps with tools are asked whole: no broken stream, whatever the model picks
        last = events[-1]
        assert last["kind"] == "done" or "cancel" in last["message"], last
        calls = [e for e in events if e["kind"] == "toolCall"]
        results = {e["toolCallId"] for e in events if e["kind"] == "toolResult"}
        for call in calls:  # parsed into a name and JSON arguments (or an error the model sees)
            assert isinstance(call["name"], str) and call["name"]
            assert isinstance(call["args"], (dict, str))
        assert calls[:-1] == [c for c in calls[:-1] if c["toolCallId"] in results]
        assert not rig.approvals, "read-only policy: nothing asked the user"
        assert_paired(await rig.log(sid))


async def test_llama_server_props_say_no_tools_and_the_user_is_told_once(
    cpp_server: RunningServer, home: Path, workspace: Path
) -> None:
    write_config(home)
    async with real_rig(cpp_server.base_url, cpp_server.model, home, workspace) as rig:
        sid = await rig.session()
        first = await rig.turn(sid, "Read app.py.")
        second = await rig.turn(sid, "Thanks.")
        assert first[-1]["kind"] == "done" and second[-1]["kind"] == "done"
        notices = tool_notices(first + second)
        assert len(notices) == 1, notices
        assert "/props chat_template_caps.supports_tool_calls" in notices[0]
        assert "tool_protocol" in notices[0], "the notice says what to set"
        await assert_wire_matches_mode(rig, sid, TEXT_MODE in notices[0])
        notes = (await rig.ledger(sid))["totals"]["windowNotes"]
        assert notices[0] in notes
        # llama-server reports usage: billed figures are real
        totals = (await rig.ledger(sid))["totals"]
        assert totals["billedReported"] is True and totals["billedInput"] > 0


async def test_the_text_protocol_when_chosen_replaces_native_tools(
    cpp_server: RunningServer, home: Path, workspace: Path
) -> None:
    write_config(home, providers={"tool_protocol": "text"})
    async with real_rig(cpp_server.base_url, cpp_server.model, home, workspace) as rig:
        sid = await rig.session()
        events = await rig.turn(sid, "Read app.py.")
        assert events[-1]["kind"] == "done", events[-1]
        assert not tool_notices(events), "the user chose the text protocol: nothing to say"
        await assert_wire_matches_mode(rig, sid, text_mode=True)
        assert_paired(await rig.log(sid))
