"""The provider's connections on plain asyncio (``aio_backend``): a streamed reply
arrives whole and in order, over TLS too; a reply larger than the read buffer is read
through its flow control; a stalled server is a read timeout, a server that hangs up
mid-reply a broken stream, a closed port a connection error, each a ProviderError
saying so; a kept-alive connection the server closed is not reused."""

from __future__ import annotations

import asyncio
import gzip
import json
import shutil
import ssl
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import pytest
from provider_helpers import request

from bonsai.services.providers import ProviderError, make_provider
from bonsai.services.providers.aio_backend import HIGH_WATER, AsyncioTransport
from bonsai.services.providers.types import TextDelta
from bonsai.settings import ProviderSettings

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def sse(texts: list[str]) -> bytes:
    chunks = [
        b'data: {"choices":[{"index":0,"delta":{"content":%s},"finish_reason":null}]}\n\n'
        % json.dumps(text).encode()
        for text in texts
    ]
    end = b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    return b"".join(chunks) + end


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return await reader.readexactly(length)


async def serve(handler: Handler, ssl_ctx: ssl.SSLContext | None = None) -> asyncio.Server:
    return await asyncio.start_server(handler, "127.0.0.1", 0, ssl=ssl_ctx)


def port_of(server: asyncio.Server) -> int:
    return int(server.sockets[0].getsockname()[1])


def provider_at(port: int, scheme: str = "http", **kw: object) -> object:
    settings = ProviderSettings(
        provider="openai-compatible",
        base_url=f"{scheme}://127.0.0.1:{port}/v1",
        model="m",
        max_retries=0,
        **kw,  # type: ignore[arg-type]
    )
    return make_provider(settings, env={})


async def texts_of(provider: object) -> str:
    out = []
    async for event in provider.stream(request("m")):  # type: ignore[attr-defined]
        if isinstance(event, TextDelta):
            out.append(event.text)
    return "".join(out)


async def failure_of(provider: object) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        await texts_of(provider)
    return info.value


def streaming(body: bytes, *, pause_s: float = 0.0, pieces: int = 1) -> Handler:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n")
        step = max(1, len(body) // pieces)
        for start in range(0, len(body), step):
            writer.write(body[start : start + step])
            await writer.drain()
            if pause_s:
                await asyncio.sleep(pause_s)
        writer.close()

    return handle


async def test_a_stream_read_in_many_pieces_arrives_whole_and_in_order() -> None:
    words = [f"w{i} " for i in range(300)]
    server = await serve(streaming(sse(words), pause_s=0.001, pieces=150))
    async with server:
        provider = provider_at(port_of(server))
        assert await texts_of(provider) == "".join(words)
        await provider.aclose()  # type: ignore[attr-defined]


async def test_a_reply_larger_than_the_read_buffer_is_read_through_flow_control() -> None:
    words = ["x" * 1000 + f"{i} " for i in range(3 * HIGH_WATER // 1000)]
    server = await serve(streaming(sse(words), pieces=4))
    async with server:
        provider = provider_at(port_of(server))
        assert await texts_of(provider) == "".join(words)
        await provider.aclose()  # type: ignore[attr-defined]


async def test_a_stalled_server_is_a_read_timeout() -> None:
    async def stall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n")
        writer.write(sse(["a"])[:40])
        await asyncio.sleep(5)
        writer.close()

    server = await serve(stall)
    async with server:
        provider = provider_at(port_of(server), read_timeout_s=0.3)
        error = await failure_of(provider)
        assert error.kind == "timeout" and "0.3" in error.message
        await provider.aclose()  # type: ignore[attr-defined]


async def test_a_steady_stream_outlives_its_read_timeout_and_a_stall_after_it_does_not() -> None:
    # every read waits at most the timeout from its own start (one timer serves many reads)
    words = [f"s{i} " for i in range(12)]
    body = sse(words).split(b"\n\n")

    async def steady_then_stall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n")
        for event in body[: len(words)]:  # 12 events 0.08 s apart: longer than the timeout
            writer.write(event + b"\n\n")
            await writer.drain()
            await asyncio.sleep(0.08)
        await asyncio.sleep(5)  # then nothing
        writer.close()

    server = await serve(steady_then_stall)
    async with server:
        provider = provider_at(port_of(server), read_timeout_s=0.5)
        got: list[str] = []
        with pytest.raises(ProviderError) as info:
            async for event in provider.stream(request("m")):  # type: ignore[attr-defined]
                if isinstance(event, TextDelta):
                    got.append(event.text)
        assert got == words  # nothing lost before the stall, which is a read timeout
        assert info.value.kind == "timeout" and "0.5" in info.value.message
        await provider.aclose()  # type: ignore[attr-defined]


async def test_text_cut_inside_a_character_by_the_network_arrives_whole() -> None:
    # one byte per read: every multi-byte character is cut; an invalid byte becomes U+FFFD
    words = ["é ", "naïve ", "日本 ", "😀 ", "end"]
    body = sse(words).replace(b"end", b"e\xffnd")
    server = await serve(streaming(body, pause_s=0.0005, pieces=len(body)))
    async with server:
        provider = provider_at(port_of(server))
        assert await texts_of(provider) == "é naïve 日本 😀 e\ufffdnd"
        await provider.aclose()  # type: ignore[attr-defined]


async def test_a_compressed_event_stream_is_decoded() -> None:
    words = [f"z{i} " for i in range(50)]

    async def gzipped(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        packed = gzip.compress(sse(words))
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"content-encoding: gzip\r\ncontent-length: %d\r\n\r\n" % len(packed)
        )
        writer.write(packed)
        await writer.drain()
        writer.close()

    server = await serve(gzipped)
    async with server:
        provider = provider_at(port_of(server))
        assert await texts_of(provider) == "".join(words)
        await provider.aclose()  # type: ignore[attr-defined]


async def test_a_server_hanging_up_mid_reply_is_a_broken_stream() -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n")
        writer.write(sse(["a", "b"]).split(b"\n\n")[0] + b"\n\n")
        await writer.drain()
        writer.transport.abort()

    server = await serve(hang_up)
    async with server:
        provider = provider_at(port_of(server))
        error = await failure_of(provider)
        assert error.kind == "broken_stream", error
        await provider.aclose()  # type: ignore[attr-defined]


async def test_a_closed_port_is_a_connection_error() -> None:
    server = await serve(streaming(b""))
    port = port_of(server)
    server.close()
    await server.wait_closed()
    provider = provider_at(port)
    error = await failure_of(provider)
    assert error.kind == "connect" and str(port) in error.message
    await provider.aclose()  # type: ignore[attr-defined]


async def test_a_kept_alive_connection_is_reused_and_one_the_server_closed_is_not() -> None:
    peers: list[object] = []

    async def keep_alive(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peers.append(writer.get_extra_info("peername"))
        for _ in range(2):  # two requests on one connection, then hang up
            await read_request(reader)
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
            await writer.drain()
        writer.close()

    server = await serve(keep_alive)
    async with (
        server,
        httpx.AsyncClient(
            transport=AsyncioTransport(verify=ssl.create_default_context())
        ) as client,
    ):
        url = f"http://127.0.0.1:{port_of(server)}/"
        for _ in range(2):
            assert (await client.post(url, content=b"{}")).text == "ok"
        await asyncio.sleep(0.1)  # the server hangs up the idle connection
        assert (await client.post(url, content=b"{}")).text == "ok"
    assert len(peers) == 2  # one connection for the first two, a new one for the third


@pytest.fixture
def tls_pair(tmp_path: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """(server, client) contexts for a self-signed certificate of 127.0.0.1."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("needs the openssl command to make a test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    client = ssl.create_default_context(cafile=str(cert))
    return server, client


async def test_a_stream_over_tls_arrives_whole(
    tls_pair: tuple[ssl.SSLContext, ssl.SSLContext],
) -> None:
    server_ctx, client_ctx = tls_pair
    words = [f"secret{i} " for i in range(50)]
    server = await serve(streaming(sse(words), pause_s=0.001, pieces=25), server_ctx)
    async with server, httpx.AsyncClient(transport=AsyncioTransport(verify=client_ctx)) as client:
        url = f"https://127.0.0.1:{port_of(server)}/v1/chat/completions"
        async with client.stream("POST", url, content=b"{}") as resp:
            body = b"".join([part async for part in resp.aiter_bytes()])
    assert body == sse(words)


async def test_a_certificate_the_client_does_not_trust_is_a_connection_error(
    tls_pair: tuple[ssl.SSLContext, ssl.SSLContext],
) -> None:
    server_ctx, _ = tls_pair
    server = await serve(streaming(sse(["a"])), server_ctx)
    async with server:
        provider = provider_at(port_of(server), scheme="https")
        error = await failure_of(provider)
        assert error.kind == "connect" and "certificate" in error.message.lower()
        await provider.aclose()  # type: ignore[attr-defined]
