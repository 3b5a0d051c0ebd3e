"""What one turn costs the event loop: its thread's CPU per turn, split by step.

A daemon in process (its loop in this thread) runs ``--turns`` turns back to back on a
session that holds ``--history`` messages of ~2,000 tokens, against the bench's
timestamped stream server (its own process; ``--tokens`` deltas per reply, kept
connections unless ``--no-keep-alive``). One client is attached over a socket pair,
so every event is framed and written as in the daemon. Reported: the loop thread's
CPU per turn (``time.thread_time``, which load distorts least) and the part of it
spent in each named step (thread-CPU accumulators wrapped around them here, not in
the daemon; a step run in a worker thread is counted apart, "off the loop"), how long
one loop callback held the loop (its CPU: slices over 1, 2, 5, 10, 20 ms per turn, and a
task's slices over 2 ms named by where it resumed and where it stopped), and with
``--profile`` where the rest goes (cProfile, the same clock; no slice timing then).

    python bench/turn_cost.py [--history 20] [--turns 40] [--tokens 5] [--no-keep-alive]
        [--profile]

Bounded: a fixed count of turns on loopback, tens of seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import functools
import json
import os
import pstats
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from load_clients import start_stream_process

CHUNK = "lorem ipsum dolor sit amet " * 370  # ~2,000 tokens
spent: dict[str, float] = defaultdict(float)
calls: dict[str, int] = defaultdict(int)
SLICE_MS = (1, 2, 5, 10, 20)
slices: list[float] = []  # the loop thread's CPU in each callback it ran (ms), while measuring
SPAN_MS = 2.0  # a task's slice longer than this is named by where it resumed and stopped
spans: dict[str, int] = defaultdict(int)
spans_ms: dict[str, float] = defaultdict(float)


def _where(task: asyncio.Task[Any]) -> str:
    """Where a task waits: its innermost frame's function and line."""
    coro: Any = task.get_coro()
    frame = None
    while coro is not None and getattr(coro, "cr_frame", None) is not None:
        if "bonsai" in coro.cr_frame.f_code.co_filename:  # the innermost of bonsai's own
            frame = coro.cr_frame
        coro = getattr(coro, "cr_await", None)
    if frame is None:
        return "its start"
    return f"{Path(frame.f_code.co_filename).stem}.{frame.f_code.co_name}:{frame.f_lineno}"


def _time_slices() -> Callable[[], None]:
    """Time every loop callback on this thread's CPU clock (``Handle._run`` wrapped):
    how long one slice held the loop. Returns the undo."""
    from asyncio import events

    original = events.Handle._run

    def timed(handle: events.Handle) -> None:
        task = getattr(handle._callback, "__self__", None)  # type: ignore[attr-defined]
        task = task if isinstance(task, asyncio.Task) else None
        begun = _where(task) if task is not None else ""
        t0 = time.thread_time()
        try:
            original(handle)
        finally:
            ms = 1000 * (time.thread_time() - t0)
            slices.append(ms)
            if ms > SPAN_MS and task is not None:
                span = f"{begun} -> {_where(task) if not task.done() else 'its end'}"
                spans[span] += 1
                spans_ms[span] += ms

    events.Handle._run = timed  # type: ignore[method-assign]

    def undo() -> None:
        events.Handle._run = original  # type: ignore[method-assign]

    return undo


def _accumulate(owner: Any, name: str, label: str) -> None:
    """Wrap the synchronous ``owner.name`` so the loop thread's CPU inside it adds to
    ``spent[label]`` (a nested wrapped call counts in both)."""
    original: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(original)
    def timed(*args: Any, **kw: Any) -> Any:
        t0 = time.thread_time()
        try:
            return original(*args, **kw)
        finally:
            on_loop = threading.current_thread() is threading.main_thread()
            where = label if on_loop else f"{label} (off the loop)"
            spent[where] += time.thread_time() - t0
            calls[where] += 1

    setattr(owner, name, timed)


def _instrument() -> None:
    from bonsai.agent import context_bridge, runtime
    from bonsai.daemon import state
    from bonsai.services.providers import transport
    from bonsai.services.store import sessions
    from bonsai.session import chat
    from bonsai.session.steps import runner

    _accumulate(context_bridge.ContextBridge, "parts", "system parts (all)")
    if hasattr(context_bridge, "_turn_parts"):  # kept while the disk stands
        _accumulate(context_bridge._turn_parts, "parts", "  stable parts")
    else:  # a daemon that reads them every turn
        _accumulate(context_bridge, "stable_parts", "  stable parts")
    _accumulate(context_bridge, "volatile_part", "  volatile tail (git status)")
    _accumulate(context_bridge.ContextBridge, "view", "window view")
    if hasattr(context_bridge.ContextBridge, "assemble_input"):  # the view and parts apart
        _accumulate(context_bridge.ContextBridge, "input_of", "assembly input (parts)")
        _accumulate(context_bridge.ContextBridge, "assemble_input", "assembly (core, state saved)")
    else:
        _accumulate(context_bridge.ContextBridge, "assemble", "assembly (with parts, view)")
    _accumulate(context_bridge.ContextBridge, "history", "history read")
    _accumulate(transport, "encode_body", "body JSON encode")
    _accumulate(sessions.SessionStore, "append_many", "append_many")
    _accumulate(runtime.SessionRuntime, "_publish", "non-delta events published")
    _accumulate(runtime.SessionRuntime, "flush", "delta events published")
    _accumulate(runner.TurnSteps, "appended", "hooks: appended")
    _accumulate(runner.TurnSteps, "after_model", "hooks: after model")
    _accumulate(runner.TurnSteps, "note", "hooks: note")
    _accumulate(chat, "make_provider", "provider made")
    _accumulate(chat, "bridge_for", "bridge_for")
    _accumulate(state.Daemon, "broadcast", "broadcasts (all)")


def _frame(payload: dict[str, Any]) -> bytes:
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _client(sock: socket.socket, sid: str, turns: int, done: list[float]) -> None:
    """Attach, then send a turn and wait for its end, ``turns`` times."""
    buffer = bytearray()

    def read_one() -> dict[str, Any]:
        while True:
            head_end = buffer.find(b"\r\n\r\n")
            if head_end >= 0:
                head = bytes(buffer[:head_end]).lower().split(b"\r\n")
                length = next(
                    int(h.split(b":")[1]) for h in head if h.startswith(b"content-length")
                )
                end = head_end + 4 + length
                if len(buffer) >= end:
                    body = bytes(buffer[head_end + 4 : end])
                    del buffer[:end]
                    return json.loads(body)
            chunk = sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("closed")
            buffer.extend(chunk)

    ids = iter(range(1, 1_000_000))

    def request(method: str, params: dict[str, Any]) -> None:
        sock.sendall(
            _frame({"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params})
        )

    request("bonsai/session/attach", {"sessionId": sid})
    for _ in range(turns):
        request("bonsai/chat/send", {"sessionId": sid, "text": "go"})
        while True:
            message = read_one()
            params = message.get("params") or {}
            if message.get("method") == "bonsai/chat/event" and params.get("kind") in (
                "done",
                "error",
            ):
                done.append(time.perf_counter())
                break


async def run(args: argparse.Namespace) -> None:
    stream_proc, port = start_stream_process(args.tokens, not args.no_keep_alive)
    home = Path(tempfile.mkdtemp(prefix="bonsai-turn-cost-"))
    os.environ.update(
        {
            "BONSAI_HOME": str(home),
            "BONSAI_PROVIDER": "sim",
            "BONSAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
            "BONSAI_MODEL": "gpt-4o-mini",
        }
    )
    (home / "config.json").write_text(json.dumps({"repomap": {"enabled": False}}))
    import bonsai.daemon.handlers  # noqa: F401  (registers the handlers)
    from bonsai.daemon.rpc import Writer, serve_stream
    from bonsai.daemon.state import Daemon
    from bonsai.domain import Message
    from bonsai.services.store.db import open_database

    _instrument()
    workspace = home / "project"
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text("Run the tests before you say done.\n")
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)  # a project, as most are
    db_path = home / "bonsai.db"
    daemon = Daemon(home, open_database(db_path), db_path)
    sid = daemon.store.create(str(workspace)).session_id
    for n in range(args.history):
        daemon.store.append(sid, Message(role="user" if n % 2 == 0 else "assistant", content=CHUNK))
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours)
    served = asyncio.ensure_future(
        serve_stream(daemon, "unix", reader, Writer(writer.write, writer.close), writer.close)
    )
    warm: list[float] = []
    await asyncio.to_thread(_client, theirs, sid, args.warm, warm)  # tokenizer, memos, first map
    await asyncio.sleep(2.5)  # a workspace made just now is read again until it settles
    spent.clear()
    calls.clear()
    profiler = cProfile.Profile(time.thread_time) if args.profile else None
    done: list[float] = []
    thread = threading.Thread(target=_client, args=(theirs, sid, args.turns, done))
    untime = _time_slices() if not args.profile else None
    cpu0, wall0 = time.thread_time(), time.perf_counter()
    if profiler is not None:
        profiler.enable()
    thread.start()
    while thread.is_alive():
        await asyncio.sleep(0.005)
    if profiler is not None:
        profiler.disable()
    if untime is not None:
        untime()
    cpu, wall = time.thread_time() - cpu0, time.perf_counter() - wall0
    print(
        f"turn cost: {args.turns} turns, {args.history} messages (~{args.history * 2}k tokens), "
        f"{args.tokens} deltas per reply, stream server "
        f"{'closing each connection' if args.no_keep_alive else 'keeping connections alive'}"
    )
    print(
        f"  loop thread CPU per turn {1000 * cpu / args.turns:.2f} ms "
        f"({1000 * wall / args.turns:.1f} ms wall per turn); load {os.getloadavg()[0]:.1f}"
    )
    if slices:
        longest = sorted(slices)[-3:]
        print(
            "  loop slices (one callback's CPU) per turn: "
            + ", ".join(
                f"> {ms} ms {sum(1 for s in slices if s > ms) / args.turns:.2f}" for ms in SLICE_MS
            )
            + f"; the longest {', '.join(f'{s:.2f}' for s in reversed(longest))} ms"
        )
        for span, count in sorted(spans.items(), key=lambda kv: -spans_ms[kv[0]])[:8]:
            print(
                f"    slice > {SPAN_MS:g} ms {count / args.turns:.2f} per turn, "
                f"mean {spans_ms[span] / count:.2f} ms: {span}"
            )
    for label, seconds in sorted(spent.items(), key=lambda kv: -kv[1]):
        print(
            f"    {label:<30} {1000 * seconds / args.turns:6.2f} ms per turn "
            f"({calls[label] / args.turns:.1f} calls)"
        )
    theirs.close()
    await asyncio.wait_for(served, 10)
    await daemon.hub.clients.aclose()
    daemon.hub.close()
    daemon.views.close()
    daemon.db.close()
    stream_proc.kill()
    if profiler is not None:
        stats = pstats.Stats(profiler)
        stats.sort_stats("tottime").print_stats(30)
        stats.sort_stats("cumulative").print_stats(60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--history", type=int, default=20)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--warm", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=5)
    parser.add_argument("--no-keep-alive", action="store_true")
    parser.add_argument("--profile", action="store_true")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
