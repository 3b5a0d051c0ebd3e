"""bonsai against real third-party servers and a real small model, end to end.

llama-cpp-python's ``llama_cpp.server`` with the model's own chat template
(which exposes no window, sends no usage and drops tools, so a turn is one step) and llama.cpp's C++ ``llama-server`` (which serves ``/props`` and
reports usage), both serving SmolLM2-135M-Instruct on loopback, driven through
the real daemon over JSON-RPC. The assertions are about behaviour that does
not depend on what the model says: events, the ledger, pairing, limits.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_servers import CPP_SERVER_CTX, PY_SERVER_CTX, RunningServer
from real_rig import real_rig, text_of, write_config

from bonsai_testing import events_of, rpc

# a real model on a shared machine: minutes, not the suite's 120 s per test
pytestmark = pytest.mark.timeout(420)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("def answer():\n    return 41\n")
    return ws


async def test_turns_with_history_stream_and_the_ledger_is_honest(
    py_plain_server: RunningServer, home: Path, workspace: Path
) -> None:
    write_config(home)
    async with real_rig(py_plain_server.base_url, py_plain_server.model, home, workspace) as rig:
        sid = await rig.session()
        for question in ("Say hello.", "What did I just ask you?", "Name a colour."):
            events = await rig.turn(sid, question)
            assert events[-1]["kind"] == "done", events[-1]
            seqs = [e["seq"] for e in events]
            assert seqs == sorted(seqs)
        messages = await rig.log(sid)
        assert [m["role"] for m in messages] == ["user", "assistant"] * 3
        # the last request carried the whole history
        wire = await rig.ledger(sid, "wire")
        sent = [m["role"] for m in wire["messages"] if m["role"] != "system"]
        assert sent[:6] == ["user", "assistant"] * 3
        totals = (await rig.ledger(sid))["totals"]
        # llama_cpp.server exposes no window: a small default with a visible note, never 128k
        assert totals["window"] == 8_192 and totals["window"] <= PY_SERVER_CTX
        assert totals["windowSource"] == "default for an unknown model"
        assert any("unknown window: set providers.models." in n for n in totals["windowNotes"])
        assert totals["reserve"] <= totals["window"] // 4
        # it sends no usage: our estimate is shown, billed figures say so
        assert totals["billedReported"] is False and totals["billedInput"] == 0
        assert totals["estimatedInput"] > 0
        turns = (await rig.ledger(sid, "turns"))["turns"]
        assert len(turns) == 3 and all(t["estimatedTokens"] > 0 for t in turns)


async def test_a_cancelled_turn_leaves_the_next_one_working(
    py_plain_server: RunningServer, home: Path, workspace: Path
) -> None:
    write_config(home, context={"output_reserve": 400})
    async with real_rig(py_plain_server.base_url, py_plain_server.model, home, workspace) as rig:
        sid = await rig.session()
        events = events_of(rig.client)
        cancelled = False
        for _ in range(3):  # the model may finish before we cancel; ask again
            turn_id = await rig.send(sid, "Count from 1 to 300, one number per line.")
            await events.wait_for(
                "bonsai/chat/event",
                lambda p, t=turn_id: p["turnId"] == t and p["kind"] in ("delta", "done", "error"),
                120,
            )
            result = await rpc(rig.client, "bonsai/chat/cancel", {"sessionId": sid})
            finished = await rig.wait(turn_id)
            if result["cancelled"]:
                assert finished[-1]["kind"] == "error" and "cancel" in finished[-1]["message"]
                cancelled = True
                break
        assert cancelled, "no turn was still streaming when cancelled"
        messages = await rig.log(sid)
        interrupted = [m for m in messages if m.get("status") == "interrupted"]
        assert (interrupted and messages[-1]["status"] == "interrupted") or messages[-1][
            "role"
        ] == "user"
        after = await rig.turn(sid, "Say OK.", timeout=90)
        assert after[-1]["kind"] == "done", after[-1]
        wire = await rig.ledger(sid, "wire")
        partial = interrupted[-1]["content"] if interrupted else None
        if partial:
            assert all(partial != m.get("content") for m in wire["messages"]), "never sent"


async def test_llama_server_window_is_discovered_from_props(
    cpp_server: RunningServer, home: Path, workspace: Path
) -> None:
    write_config(home, context={"output_reserve": 16_000})  # far too big for this window
    # only the provider and the base URL: the session takes the one model the server
    # serves, never the OpenAI default name and its 128k registry row
    async with real_rig(cpp_server.base_url, None, home, workspace) as rig:
        sid = await rig.session()
        totals = (await rig.ledger(sid))["totals"]
        assert totals["window"] == CPP_SERVER_CTX
        assert "/props" in totals["windowSource"]
        assert totals["reserve"] == CPP_SERVER_CTX // 4, "the reserve fits the window"
        assert not any("unknown window" in n for n in totals["windowNotes"])


async def test_a_request_that_would_overflow_is_compacted_before_it_is_sent(
    cpp_server: RunningServer, home: Path, workspace: Path
) -> None:
    write_config(home, context={"smol": True}, tools={"hidden": ["recall"]})
    async with real_rig(cpp_server.base_url, cpp_server.model, home, workspace) as rig:
        sid = await rig.session()
        filler = " ".join(f"note{i} about the build" for i in range(220))  # ~1.3k tokens
        for i in range(4):  # ~5k tokens of history: more than the 4k window
            await rpc(rig.client, "bonsai/session/append", {"sessionId": sid, "role": "user",
                      "content": f"question {i}: {filler}"})  # fmt: skip
            await rpc(rig.client, "bonsai/session/append", {"sessionId": sid, "role": "assistant",
                      "content": f"answer {i}: {filler}"})  # fmt: skip
        events = await rig.turn(sid, "Summarise in one line.")
        assert events[-1]["kind"] == "done", events[-1]  # the server accepted the request
        totals = (await rig.ledger(sid))["totals"]
        assert 0 < totals["billedInput"] <= CPP_SERVER_CTX - totals["reserve"] // 2
        turns = (await rig.ledger(sid, "turns"))["turns"]
        kinds = {e["kind"] for e in turns[-1]["events"]}
        assert kinds & {"compact", "fold", "stub", "summary"}, kinds
        assert text_of(events) is not None
