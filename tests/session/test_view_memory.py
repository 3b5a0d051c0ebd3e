"""The view process stays lean: it counts with the daemon's tokenizer (asked over its
pipe) instead of loading its own, so a daemon that serves several polling windows
costs the machine less; and its counts are still the daemon's, exactly."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from bonsai.dev.tree_rss import children_running, rss_kb
from bonsai_testing import BONSAI, bonsai_env, close_client, rpc, start_client, stop_daemon

VIEW_CHILD = "bonsai.session.view_child"
# What a view needs loaded measured ~70 MB RSS (the interpreter, pydantic, apsw, the
# protocol models, the context pipeline) plus its caches of a small session; o200k_base
# loaded in the child would add ~45 MB (measured: 47 MB after its load). 100 MB sits
# between the two with room for an allocator's slack.
CHILD_RSS_BOUND_MB = 100
PROSE = "The quick brown fox jumps over the lazy dog; naïve café, 日本語, tab\tand\nline. "


async def _until(predicate: Any, timeout: float = 120.0) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert asyncio.get_running_loop().time() < deadline, "timed out waiting"
        await asyncio.sleep(0.1)


async def _child_answers(client: Any, get: dict[str, Any]) -> dict[str, Any]:
    """``ctx/get`` once the status says the view process runs (the first views are the
    thread's while it starts)."""
    deadline = asyncio.get_running_loop().time() + 120
    while "running" not in str((await rpc(client, "bonsai/daemon/status"))["views"]):
        assert asyncio.get_running_loop().time() < deadline, "the view process did not start"
        await asyncio.sleep(0.1)
    return dict(await rpc(client, "bonsai/ctx/get", get))


async def test_the_view_process_loads_no_tokenizer_and_counts_as_the_daemon(home: Path) -> None:
    env = bonsai_env(
        home, BONSAI_PROVIDER="sim", BONSAI_MODEL="gpt-4o-mini", BONSAI_VIEW_PROCESS="1"
    )
    thread_env = {**env, "BONSAI_VIEW_PROCESS": "0"}
    client = await start_client([*BONSAI, "connect"], env)
    try:
        pid = (await rpc(client, "bonsai/daemon/status"))["pid"]
        sid = (await rpc(client, "bonsai/session/create", {"workspace": str(home)}))["sessionId"]
        for n in range(12):
            role = "user" if n % 2 == 0 else "assistant"
            text = f"{n}: " + PROSE * (20 + 7 * n)
            await rpc(
                client, "bonsai/session/append", {"sessionId": sid, "role": role, "content": text}
            )
        views = {}
        for view in ("ledger", "wire", "turns"):
            get = {"sessionId": sid, "view": view}
            await rpc(client, "bonsai/ctx/get", get)  # starts the view process
            views[view] = await _child_answers(client, get)
        child = (await _until(lambda: children_running(pid, VIEW_CHILD)))[0]
        child_mb = rss_kb(child) / 1024
        print(f"view process RSS {child_mb:.1f} MB")
        assert 0 < child_mb < CHILD_RSS_BOUND_MB, f"the view process holds {child_mb:.0f} MB"
        tokens = [n["tokens"] for n in views["ledger"]["nodes"] if n["section"] == "messages"]
        assert len(tokens) == 12 and all(t > 100 for t in tokens), tokens
    finally:
        await close_client(client)
    await asyncio.to_thread(stop_daemon, home)
    # the same session's ledger computed by a daemon whose views stay on its thread
    # (its own tokenizer): the child's counts were the daemon's, node for node
    client = await start_client([*BONSAI, "connect"], thread_env)
    try:
        ledger = await rpc(client, "bonsai/ctx/get", {"sessionId": sid, "view": "ledger"})
        assert "thread" in str((await rpc(client, "bonsai/daemon/status"))["views"])
    finally:
        await close_client(client)
    assert [(n["id"], n["tokens"]) for n in ledger["nodes"]] == [
        (n["id"], n["tokens"]) for n in views["ledger"]["nodes"]
    ]
