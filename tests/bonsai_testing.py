"""Shared fixtures: a private BONSAI_HOME per test and real JSON-RPC clients.

Clients are pytest-lsp ``LanguageClient`` instances talking to a real
``bonsai serve --stdio`` or ``bonsai connect`` subprocess.
"""

from __future__ import annotations

import asyncio
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from bonsai.cli.stop import stop_and_wait

BONSAI = [sys.executable, "-m", "bonsai"]


def plain(value: Any) -> Any:
    """pygls hands custom results back as namedtuples; turn them into dicts."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "home"
    path.mkdir()
    yield path
    stop_daemon(path)


def bonsai_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BONSAI_")}
    env.update({"BONSAI_HOME": str(home), "PYTHONUNBUFFERED": "1", **extra})
    return env


def sim_env(home: Path, base_url: str, model: str = "gpt-4o-mini", **extra: str) -> dict[str, str]:
    """``bonsai_env`` for a daemon whose provider is the simulator at ``base_url``."""
    return bonsai_env(
        home, BONSAI_PROVIDER="sim", BONSAI_BASE_URL=base_url, BONSAI_MODEL=model, **extra
    )


def pty_chat(home: Path, workspace: Path, env: dict[str, str], prompt: str, answer: str) -> str:
    """Run ``bonsai chat PROMPT`` on a pseudo-terminal, type ``answer`` at the first
    ``[y/N]``, and return all it printed."""
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [*BONSAI, "chat", prompt, "--workspace", str(workspace)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=bonsai_env(home, **env),
        close_fds=True,
    )
    os.close(slave)
    out = b""
    answered = False
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                out += chunk
                if not answered and b"[y/N]" in out:
                    os.write(master, answer.encode())
                    answered = True
            elif process.poll() is not None:
                break
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(master)
    return out.decode("utf-8", errors="replace")


def stop_daemon(home: Path) -> None:
    """Stop a socket daemon left by a test and wait for its exit (no-op when none runs).

    What ``bonsai stop`` does, from this process: a ``bonsai stop`` command per home was a
    Python start of its own. Without a ``daemon.json`` no daemon runs there, and no
    connection is tried. A daemon that does not stop in time fails the test, named."""
    if (home / "daemon.json").exists():
        stop_and_wait(home, timeout=30)  # a loaded machine: the bound is not the test


class Events:
    """Collects every bonsai/* notification a client receives, in order."""

    def __init__(self) -> None:
        self.items: list[tuple[str, dict[str, Any]]] = []
        self._changed = asyncio.Event()

    def add(self, method: str, params: Any) -> None:
        self.items.append((method, plain(params)))
        self._changed.set()

    def of(self, method: str) -> list[dict[str, Any]]:
        return [p for m, p in self.items if m == method]

    async def wait_for(self, method: str, predicate: Any = None, timeout: float = 20.0) -> Any:
        async def poll() -> Any:
            while True:
                for params in self.of(method):
                    if predicate is None or predicate(params):
                        return params
                self._changed.clear()
                await self._changed.wait()

        return await asyncio.wait_for(poll(), timeout)


NOTIFICATIONS = (
    "bonsai/session/event",
    "bonsai/chat/event",
    "bonsai/ctx/changed",
    "bonsai/config/changed",
    "bonsai/memory/suggestion",
    "bonsai/handoff/suggested",
    "bonsai/rules/changed",
    "bonsai/tree/changed",
    "bonsai/reflect/offered",
)


async def start_client(
    command: list[str], env: dict[str, str], options: dict[str, Any] | None = None
) -> LanguageClient:
    """A started, initialized client; ``options`` its ``initializationOptions``."""
    config = ClientServerConfig(server_command=command, server_env=env)
    client = await config.start()
    assert isinstance(client, LanguageClient)
    events = Events()
    client.bonsai_events = events  # type: ignore[attr-defined]
    for method in NOTIFICATIONS:
        client.feature(method)(lambda params, _m=method: events.add(_m, params))
    await client.initialize_session(
        lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(),
            process_id=os.getpid(),
            initialization_options=options,
        )
    )
    return client


def events_of(client: LanguageClient) -> Events:
    return client.bonsai_events  # type: ignore[attr-defined,no-any-return]


async def rpc(client: LanguageClient, method: str, params: dict[str, Any] | None = None) -> Any:
    result = await asyncio.wait_for(
        client.protocol.send_request_async(method, params if params is not None else {}), 30
    )
    return plain(result)


async def close_client(client: LanguageClient) -> None:
    try:
        await asyncio.wait_for(client.shutdown_session(), 10)
    except Exception:
        pass
    await client.stop()


@pytest.fixture
async def stdio_client(home: Path) -> AsyncIterator[LanguageClient]:
    client = await start_client([*BONSAI, "serve", "--stdio"], bonsai_env(home))
    yield client
    await close_client(client)
