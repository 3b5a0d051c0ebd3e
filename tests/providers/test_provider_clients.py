"""Kept provider clients (``services/providers/clients.py``): providers of one shape
share one client and its kept connections; a new shape gets a new client; a stale
or cancelled connection never breaks the next call. Over the real simulator and a
real socket server (connections counted where they are accepted)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from provider_helpers import SleepRecorder, collect, request, text_of

from bonsai.services.providers import Provider, make_provider
from bonsai.services.providers.clients import ClientPool
from bonsai.settings import ProviderSettings
from bonsai.sim import Reply, Script, Simulator
from bonsai.sim.runner import run_simulator

LONG = Reply(text=" ".join(f"word{i}" for i in range(60)))


def sim_provider(
    sim: Simulator, pool: ClientPool, sleeps: SleepRecorder | None = None, **kw: Any
) -> Provider:
    settings = ProviderSettings(provider="sim", base_url=sim.openai_base_url, **kw)
    return make_provider(settings, env={}, clients=pool, sleep=sleeps)


def chat_connections(sim: Simulator) -> list[int]:
    """The accepted connection each chat request came on, in order."""
    return [r.connection for r in sim.requests if r.route == "openai"]


async def test_two_calls_of_one_shape_share_one_connection() -> None:
    pool = ClientPool()
    async with run_simulator(Script(steps=[Reply(text="one"), Reply(text="two")])) as sim:
        first = sim_provider(sim, pool)
        assert text_of(await collect(first, request("gpt-4o-mini"))) == "one"
        await first.aclose()  # a turn's end: the client stays for the next turn
        second = sim_provider(sim, pool)
        assert text_of(await collect(second, request("gpt-4o-mini"))) == "two"
        await second.aclose()
        assert chat_connections(sim) == [1, 1] and sim.accepted == 1
        assert pool.made == 1
        await pool.aclose()
        assert pool.clients() == 0


async def test_a_changed_key_or_timeout_gets_a_new_client_and_the_old_one_closes() -> None:
    pool = ClientPool()
    script = Script(steps=[Reply(text="a"), Reply(text="b"), Reply(text="c")])
    async with run_simulator(script) as sim:
        old = sim_provider(sim, pool, api_key="key-one")
        await collect(old, request("gpt-4o-mini"))
        new = sim_provider(sim, pool, api_key="key-number-two")  # while the old one is held
        await collect(new, request("gpt-4o-mini"))
        assert pool.made == 2
        old_client = old._transport._client  # type: ignore[attr-defined]
        assert not old_client.is_closed  # still leased by a running turn
        await old.aclose()
        assert old_client.is_closed and pool.clients() == 1
        slower = sim_provider(sim, pool, api_key="key-number-two", read_timeout_s=300)
        await collect(slower, request("gpt-4o-mini"))
        assert pool.made == 3
        auths = [r.headers.get("authorization") for r in sim.requests if r.route == "openai"]
        assert auths[0] != auths[1] == auths[2]  # lengths only: the keys differ
        assert len(set(chat_connections(sim))) == 3
        await new.aclose()
        await slower.aclose()
        await pool.aclose()


async def test_a_server_that_drops_keep_alive_gets_a_new_connection_each_call() -> None:
    pool = ClientPool()
    script = Script(steps=[Reply(text="one"), Reply(text="two")])
    async with run_simulator(script, keep_alive=False) as sim:
        for expected in ("one", "two"):
            provider = sim_provider(sim, pool)
            assert text_of(await collect(provider, request("gpt-4o-mini"))) == expected
            await provider.aclose()
        assert chat_connections(sim) == [1, 2]
    await pool.aclose()


async def test_a_cancelled_call_does_not_poison_the_pool() -> None:
    pool = ClientPool()
    async with run_simulator(Script(steps=[LONG, Reply(text="after")], latency_ms=20)) as sim:
        provider = sim_provider(sim, pool)
        started = asyncio.Event()

        async def consume() -> None:
            async for _ in provider.stream(request("gpt-4o-mini")):
                started.set()

        task = asyncio.ensure_future(consume())
        await asyncio.wait_for(started.wait(), 10)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await provider.aclose()
        again = sim_provider(sim, pool)
        # a client never reads the rest of a cancelled reply as the next one's start
        assert text_of(await asyncio.wait_for(collect(again, request("gpt-4o-mini")), 10)) == (
            "after"
        )
        await again.aclose()
        assert chat_connections(sim) == [1, 2]  # the half-read connection was closed
        assert pool.made == 1
    await pool.aclose()


# ------------------------------------------------ a server that closes a kept connection
def _sse_reply(text: str) -> bytes:
    chunk = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
    end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    body = b"data: %s\n\ndata: %s\n\ndata: [DONE]\n\n" % (
        json.dumps(chunk).encode(),
        json.dumps(end).encode(),
    )
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: %d\r\n\r\n"
    return head % len(body) + body


class ClosingServer:
    """Answers the first request on each connection, keeps it open, and closes it
    without a word when a second request comes on it (a server's idle timeout racing
    the request): the client must send that request again, on a new connection."""

    def __init__(self) -> None:
        self.accepted = 0
        self.answered = 0
        self.server: asyncio.Server | None = None

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        served = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
                await reader.readexactly(length)
                if served:
                    return  # closed with the request unanswered
                served += 1
                self.answered += 1
                writer.write(_sse_reply(f"reply {self.answered}"))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            writer.close()


@pytest.fixture
async def closing() -> AsyncIterator[tuple[ClosingServer, str]]:
    server = ClosingServer()
    server.server = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    port = server.server.sockets[0].getsockname()[1]
    try:
        yield server, f"http://127.0.0.1:{port}/v1"
    finally:
        server.server.close()


async def test_a_kept_connection_the_server_closed_is_reopened_without_a_retry(
    closing: tuple[ClosingServer, str],
) -> None:
    server, url = closing
    pool, sleeps = ClientPool(), SleepRecorder()
    settings = ProviderSettings(provider="openai-compatible", base_url=url, model="m")
    texts = []
    for _ in range(3):
        provider = make_provider(settings, env={}, clients=pool, sleep=sleeps)
        texts.append(text_of(await collect(provider, request("m"))))
        await provider.aclose()
    assert texts == ["reply 1", "reply 2", "reply 3"]
    assert server.accepted == 3  # each later call found its kept connection closed
    assert sleeps.delays == []  # reopened at once: no backoff, no retry the user sees
    await pool.aclose()
