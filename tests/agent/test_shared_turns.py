"""Turns seen by several clients; approvals with nobody to ask; the terminal clients."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from agent_helpers import call

from bonsai.sim import Script
from bonsai.sim.frames import text_pieces
from bonsai.sim.runner import SimulatorThread, run_simulator
from bonsai.sim.script import Reply
from bonsai_testing import BONSAI, close_client, events_of, rpc, sim_env, start_client


async def test_two_clients_see_the_same_stream_and_a_late_one_catches_up(
    home: Path, workspace: Path
) -> None:
    script = Script(steps=[Reply(text=" ".join(f"w{i}" for i in range(150)))], latency_ms=8)
    async with run_simulator(script) as sim:
        env = sim_env(home, sim.openai_base_url)
        a, b = await asyncio.gather(
            start_client([*BONSAI, "connect"], env), start_client([*BONSAI, "connect"], env)
        )
        late = None
        try:
            sid = (await rpc(a, "bonsai/session/create", {"workspace": str(workspace)}))[
                "sessionId"
            ]
            for client in (a, b):
                await rpc(client, "bonsai/session/attach", {"sessionId": sid})
            turn = (await rpc(a, "bonsai/chat/send", {"sessionId": sid, "text": "talk"}))["turnId"]
            await events_of(a).wait_for("bonsai/chat/event", lambda p: p["kind"] == "delta")
            late = await start_client([*BONSAI, "connect"], env)
            await rpc(late, "bonsai/session/attach", {"sessionId": sid})
            for client in (a, b, late):
                await events_of(client).wait_for(
                    "bonsai/chat/event", lambda p: p["turnId"] == turn and p["kind"] == "done"
                )
            streams = [
                [(e["seq"], e["kind"], e.get("text")) for e in events_of(c).of("bonsai/chat/event")]
                for c in (a, b, late)
            ]
            assert streams[0] == streams[1], "both clients see every event in the same order"
            assert streams[2] == streams[0], "a client attaching mid-stream catches up"
        finally:
            for client in (a, b, late):
                if client is not None:
                    await close_client(client)


async def test_concurrent_sends_are_queued_not_interleaved(home: Path, workspace: Path) -> None:
    script = Script(steps=[Reply(text="first " * 40), Reply(text="second " * 40)], latency_ms=5)
    async with run_simulator(script) as sim:
        env = sim_env(home, sim.openai_base_url)
        a, b = await asyncio.gather(
            start_client([*BONSAI, "connect"], env), start_client([*BONSAI, "connect"], env)
        )
        try:
            sid = (await rpc(a, "bonsai/session/create", {"workspace": str(workspace)}))[
                "sessionId"
            ]
            await rpc(a, "bonsai/session/attach", {"sessionId": sid})
            one, two = await asyncio.gather(
                rpc(a, "bonsai/chat/send", {"sessionId": sid, "text": "one"}),
                rpc(b, "bonsai/chat/send", {"sessionId": sid, "text": "two"}),
            )
            for turn in (one["turnId"], two["turnId"]):
                await events_of(a).wait_for(
                    "bonsai/chat/event", lambda p, t=turn: p["turnId"] == t and p["kind"] == "done"
                )
            order = [e["turnId"] for e in events_of(a).of("bonsai/chat/event")]
            first = order[0]
            switch = order.index(next(t for t in order if t != first))
            assert all(t == first for t in order[:switch]) and all(
                t != first for t in order[switch:]
            )
            log = await rpc(a, "bonsai/session/attach", {"sessionId": sid})
            assert [m["role"] for m in log["messages"]] == [
                "user",
                "assistant",
                "user",
                "assistant",
            ]
        finally:
            await asyncio.gather(close_client(a), close_client(b))


async def test_no_client_able_to_approve_means_denied(home: Path, workspace: Path) -> None:
    script = Script(
        steps=[
            Reply(tool_calls=[call("write_file", path="new.txt", content="x")]),
            Reply(text="ok"),
        ]
    )
    async with run_simulator(script) as sim:
        env = sim_env(home, sim.openai_base_url)
        client = await start_client([*BONSAI, "serve", "--stdio"], env)
        try:
            sid = (await rpc(client, "bonsai/session/create", {"workspace": str(workspace)}))[
                "sessionId"
            ]
            await rpc(
                client, "bonsai/chat/send", {"sessionId": sid, "text": "write it"}
            )  # not attached
            for _ in range(200):
                log = await rpc(client, "bonsai/session/attach", {"sessionId": sid})
                await rpc(client, "bonsai/session/detach", {"sessionId": sid})
                if len(log["messages"]) >= 4:
                    break
                await asyncio.sleep(0.05)
            tool = next(m for m in log["messages"] if m["role"] == "tool")
            assert "did not approve" in tool["content"]
            assert not (workspace / "new.txt").exists()
        finally:
            await close_client(client)


def test_bonsai_chat_prints_the_streamed_reply(home: Path, workspace: Path) -> None:
    script = Script(
        steps=[
            Reply(text="Looking.", tool_calls=[call("read_file", path="app.py")]),
            Reply(text="It returns 41."),
        ]
    )
    with SimulatorThread(script) as sim:
        env = sim_env(home, sim.openai_base_url)
        done = subprocess.run(
            [*BONSAI, "chat", "--workspace", str(workspace), "what does answer return?"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert "Looking." in done.stdout and "It returns 41." in done.stdout
        assert "read_file" in done.stdout
        ctx = subprocess.run(
            [*BONSAI, "ctx", "--workspace", str(workspace)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert ctx.returncode == 0, ctx.stderr
        assert (
            "context " in ctx.stdout and "usable tokens" in ctx.stdout and "read_file" in ctx.stdout
        )
        # the estimate's confidence in the editors' words ("estimate high" read as too high)
        assert "reserve 16,000; high confidence)" in ctx.stdout, ctx.stdout


def test_bonsai_demo_runs_offline_without_a_key(tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("BONSAI_") and not k.endswith("_API_KEY")
    }
    env["HOME"] = str(tmp_path)
    env["TMPDIR"] = str(tmp_path)  # the demo keeps its folder: keep it in the test's
    done = subprocess.run(
        [sys.executable, "-m", "bonsai", "demo"],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "demo finished: all three tasks done" in done.stdout
    assert "edit_file" in done.stdout and "7,000 usable" in done.stdout


async def test_deltas_arriving_together_reach_both_clients_whole_and_in_order(
    home: Path, workspace: Path
) -> None:
    """No pause between the simulator's chunks: one network read brings many, and the
    daemon sends them as fewer, larger delta events; every client still gets exactly the
    provider's text, in order, and the same events."""
    text = "".join(f"w{i}é\n" if i % 7 == 0 else f"w{i} " for i in range(600))
    script = Script(steps=[Reply(text=text)], latency_ms=0)
    async with run_simulator(script) as sim:
        env = sim_env(home, sim.openai_base_url)
        a, b = await asyncio.gather(
            start_client([*BONSAI, "connect"], env), start_client([*BONSAI, "connect"], env)
        )
        try:
            sid = (await rpc(a, "bonsai/session/create", {"workspace": str(workspace)}))[
                "sessionId"
            ]
            for client in (a, b):
                await rpc(client, "bonsai/session/attach", {"sessionId": sid})
            turn = (await rpc(a, "bonsai/chat/send", {"sessionId": sid, "text": "talk"}))["turnId"]
            for client in (a, b):
                await events_of(client).wait_for(
                    "bonsai/chat/event", lambda p: p["turnId"] == turn and p["kind"] == "done"
                )
            streams = [events_of(c).of("bonsai/chat/event") for c in (a, b)]
            assert streams[0] == streams[1]
            deltas = [e for e in streams[0] if e["kind"] == "delta"]
            assert "".join(e["text"] for e in deltas) == text
            seqs = [e["seq"] for e in streams[0]]
            assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
            assert len(deltas) < len(text_pieces(text)), "chunks read together went as one event"
        finally:
            for client in (a, b):
                await close_client(client)
