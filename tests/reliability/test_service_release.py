"""Per-workspace services are bounded and released, and a new workspace is built once.

A real daemon (``bonsai serve --stdio``) over JSON-RPC. What a user would
notice is read from the daemon process itself: its inotify instances (each
file watcher holds some; the system default allows 128 per user) and its open
connections to the repo-map tag cache, both from ``/proc/<pid>/fd``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from bonsai_testing import BONSAI, bonsai_env, close_client, rpc, start_client

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
MAX_LIVE = 2


def fd_targets(pid: int) -> list[str]:
    targets = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            targets.append(os.readlink(fd))
        except OSError:  # closed while listing
            continue
    return targets


def inotify_instances(pid: int) -> int:
    return sum(1 for t in fd_targets(pid) if t == "anon_inode:inotify")


def tag_cache_connections(pid: int) -> int:
    return sum(1 for t in fd_targets(pid) if t.endswith("repomap.db"))


def make_workspace(root: Path, i: int) -> Path:
    pkg = root / f"ws{i}" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "billing.py").write_text(
        f"def invoice_total_{i}(lines):\n    return sum(l.amount for l in lines)\n"
    )
    (pkg / "app.py").write_text(
        f"from pkg.billing import invoice_total_{i}\n\n\ndef main():\n"
        f"    return invoice_total_{i}([])\n"
    )
    return root / f"ws{i}"


async def wait_until(predicate, timeout: float = 15.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.05)
    return bool(predicate())


@pytest.fixture
async def daemon(home: Path) -> AsyncIterator[tuple[LanguageClient, int]]:
    """A daemon keeping at most MAX_LIVE services of each kind; idle expiry per test."""
    yield await _start(home, idle_s=900.0)


_clients: list[LanguageClient] = []


async def _start(home: Path, idle_s: float) -> tuple[LanguageClient, int]:
    config = {"daemon": {"maxWorkspaceServices": MAX_LIVE, "serviceIdleS": idle_s}}
    (home / "config.json").write_text(json.dumps(config))
    env = bonsai_env(home, BONSAI_MEMORY_EMBEDDINGS="off")
    client = await start_client([*BONSAI, "serve", "--stdio"], env)
    _clients.append(client)
    pid = (await rpc(client, "bonsai/daemon/status"))["pid"]
    return client, pid


@pytest.fixture(autouse=True)
async def _close_clients() -> AsyncIterator[None]:
    yield
    while _clients:
        await close_client(_clients.pop())


async def open_workspace(client: LanguageClient, ws: Path, i: int) -> dict:  # type: ignore[type-arg]
    scope = {"workspace": str(ws)}
    fact = f"Workspace {i} serves its API on port 80{i:02d}."
    added = await rpc(client, "bonsai/memory/add", {**scope, "fact": fact, "tier": "project"})
    await rpc(client, "bonsai/repomap/get", {**scope, "tokens": 200})
    return dict(added["entry"])


async def test_many_workspaces_keep_a_bounded_number_of_live_services(
    daemon: tuple[LanguageClient, int], tmp_path: Path
) -> None:
    client, pid = daemon
    base = inotify_instances(pid)
    workspaces = [make_workspace(tmp_path, i) for i in range(MAX_LIVE + 3)]
    first = await open_workspace(client, workspaces[0], 0)
    per_workspace = inotify_instances(pid) - base
    assert per_workspace > 0, "a live workspace watches its files"
    for i, ws in enumerate(workspaces[1:], start=1):
        await open_workspace(client, ws, i)

    # released services are closed off the loop: wait for their watchers to go
    limit = base + MAX_LIVE * per_workspace
    assert await wait_until(lambda: inotify_instances(pid) <= limit), (
        f"{inotify_instances(pid)} inotify instances for {len(workspaces)} workspaces; "
        f"{per_workspace} per workspace, at most {MAX_LIVE} live"
    )
    # SQLite keeps one closed connection's descriptor while others hold the file's
    # locks (and reuses it for the next open), so one more than the live maps
    assert await wait_until(lambda: tag_cache_connections(pid) <= MAX_LIVE + 1)

    # the first workspace was released long ago: it simply comes back, with its data
    scope = {"workspace": str(workspaces[0])}
    got = await rpc(client, "bonsai/memory/get", {**scope, "name": first["name"]})
    assert "port 8000" in got["body"]
    mapped = await rpc(client, "bonsai/repomap/get", {**scope, "tokens": 200})
    assert "invoice_total_0" in mapped["text"]
    assert await wait_until(lambda: inotify_instances(pid) <= limit)


async def test_idle_services_are_released_and_come_back_on_demand(
    home: Path, tmp_path: Path
) -> None:
    client, pid = await _start(home, idle_s=0.5)
    base = inotify_instances(pid)
    ws = make_workspace(tmp_path, 7)
    entry = await open_workspace(client, ws, 7)
    assert inotify_instances(pid) > base
    assert await wait_until(lambda: inotify_instances(pid) == base), "idle: watchers stopped"
    assert await wait_until(lambda: tag_cache_connections(pid) == 0), "idle: cache closed"
    got = await rpc(client, "bonsai/memory/get", {"workspace": str(ws), "name": entry["name"]})
    assert "port 8007" in got["body"]


async def test_racing_first_requests_for_a_workspace_share_one_build(
    stdio_client: LanguageClient, home: Path, tmp_path: Path
) -> None:
    ws = make_workspace(tmp_path, 3)
    params = {"workspace": str(ws), "tokens": 200, "mentions": "invoice_total_3"}
    one, two = await asyncio.gather(
        rpc(stdio_client, "bonsai/repomap/get", params),
        rpc(stdio_client, "bonsai/repomap/get", params),
    )
    assert one["text"] == two["text"] and "invoice_total_3" in one["text"]
    begun = [
        token
        for token, values in stdio_client.progress_reports.items()
        if any(getattr(v, "kind", None) == "begin" for v in values)
    ]
    assert len(begun) == 1, f"one build reported, not {len(begun)}"
    log = (home / "logs" / "daemon.log").read_text()
    assert log.count(f"repository map of {ws}:") == 1


async def test_services_in_use_are_not_released_under_pressure(
    daemon: tuple[LanguageClient, int], tmp_path: Path
) -> None:
    """More workspaces at once than the limit: every request is served (none of
    the maps is closed while it is being rendered)."""
    client, _ = daemon
    workspaces = [make_workspace(tmp_path, i) for i in range(MAX_LIVE + 2)]
    results = await asyncio.gather(
        *(
            rpc(client, "bonsai/repomap/get", {"workspace": str(ws), "tokens": 200})
            for ws in workspaces
        )
    )
    for i, result in enumerate(results):
        assert f"invoice_total_{i}" in result["text"]


async def test_spellings_of_one_directory_share_its_services(
    daemon: tuple[LanguageClient, int], tmp_path: Path
) -> None:
    """``ws``, ``ws/`` and ``ws/./`` are one workspace: one set of watchers, not three."""
    client, pid = daemon
    base = inotify_instances(pid)
    ws = make_workspace(tmp_path, 0)
    await open_workspace(client, ws, 0)
    one = inotify_instances(pid) - base
    for spelling in (f"{ws}/", f"{ws}/./"):
        mapped = await rpc(client, "bonsai/repomap/get", {"workspace": spelling, "tokens": 200})
        assert "invoice_total_0" in mapped["text"]
        listed = await rpc(client, "bonsai/memory/list", {"workspace": spelling})
        assert listed["entries"], "the entry added under the plain spelling"
    assert inotify_instances(pid) - base == one
