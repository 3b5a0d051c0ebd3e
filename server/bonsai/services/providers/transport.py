"""The HTTP side shared by both clients: one ``httpx.AsyncClient``, timeouts,
retries, SSE framing and error mapping. Clients only build bodies and decode
events."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

import httpx

from bonsai.services.providers.aio_backend import AsyncioTransport
from bonsai.services.providers.errors import (
    Phase,
    cancelled_error,
    error_from_exception,
    error_from_status,
    provider_message,
)
from bonsai.services.providers.retry import OnRetry, RetryPolicy, Sleep, retrying, wall_clock
from bonsai.services.providers.sse import SseEvent, iter_sse_bytes, iter_sse_text
from bonsai.services.providers.tls import ssl_context
from bonsai.services.providers.types import ProviderError, ProviderEvent
from bonsai.services.redaction import redact_error

Decoder = Callable[[AsyncIterator[SseEvent]], AsyncGenerator[ProviderEvent, None]]


async def real_sleep(seconds: float) -> None:
    await asyncio.sleep(seconds)


@dataclass
class TransportOptions:
    """Knobs a client needs from settings, plus test seams (sleep, rng, clock)."""

    label: str
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 120.0
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    secrets: tuple[str, ...] = ()
    sleep: Sleep = real_sleep
    on_retry: OnRetry | None = None  # told before each backoff (the daemon shows it)
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    now: Callable[[], float] = wall_clock
    transport: httpx.AsyncBaseTransport | None = None


def encode_body(body: dict[str, Any]) -> bytes:
    """Compact, deterministic JSON: identical requests give identical bytes."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def sse_events(resp: httpx.Response) -> AsyncGenerator[SseEvent, None]:
    """A streamed response's events. A body sent as it is (no ``content-encoding``) is
    read from the response's own byte stream, the lowest httpx gives (its errors
    still httpx's), and decoded in the SSE decoder's loop: fewer Python layers per
    network read than ``aiter_text`` over ``aiter_bytes`` over ``aiter_raw``. A
    compressed body is decoded by httpx as before."""
    codings = resp.headers.get_list("content-encoding", split_commas=True)
    plain = all(coding.strip().lower() in ("", "identity") for coding in codings)
    if not plain or not isinstance(resp.stream, httpx.AsyncByteStream):
        return iter_sse_text(resp.aiter_text())
    return iter_sse_bytes(resp.stream, resp.encoding or "utf-8")


class Transport:
    def __init__(self, opts: TransportOptions) -> None:
        self.opts = opts
        timeout = httpx.Timeout(
            connect=opts.connect_timeout_s,
            read=opts.read_timeout_s,
            write=opts.read_timeout_s,
            pool=opts.connect_timeout_s,
        )
        # the client's connections on plain asyncio (``aio_backend``); a test's own transport wins
        own = opts.transport or AsyncioTransport(verify=ssl_context())
        self._client = httpx.AsyncClient(timeout=timeout, transport=own, verify=ssl_context())
        self._closed = False

    def stream(
        self, url: str, headers: dict[str, str], body: dict[str, Any], decode: Decoder
    ) -> AsyncGenerator[ProviderEvent, None]:
        payload = encode_body(body)
        return retrying(
            lambda: self._stream_once(url, headers, payload, decode),
            self.opts.policy,
            sleep=self.opts.sleep,
            rng=self.opts.rng,
            on_retry=self.opts.on_retry,
        )

    async def post_json(
        self, url: str, headers: dict[str, str], body: dict[str, Any]
    ) -> dict[str, Any]:
        payload = encode_body(body)
        async with aclosing(
            retrying(
                lambda: self._json_once(url, headers, payload),
                self.opts.policy,
                sleep=self.opts.sleep,
                rng=self.opts.rng,
            )
        ) as results:
            async for result in results:
                return result
        raise ProviderError("malformed", f"{self.opts.label} returned no response")

    async def aclose(self) -> None:
        self._closed = True
        await self._client.aclose()

    async def _stream_once(
        self, url: str, headers: dict[str, str], payload: bytes, decode: Decoder
    ) -> AsyncGenerator[ProviderEvent, None]:
        if self._closed:
            raise cancelled_error(self.opts.label)
        phase: Phase = "open"
        try:
            async with self._client.stream("POST", url, headers=headers, content=payload) as resp:
                await self._check_stream_response(resp)
                phase = "body"
                async with aclosing(decode(sse_events(resp))) as events:
                    async for event in events:
                        yield event
        except httpx.HTTPError as exc:
            raise self._map(exc, phase) from None
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            # a shape no decoder check anticipated: still the provider's data, still one error type
            detail = redact_error(f"{type(exc).__name__}: {exc}", self.opts.secrets)
            raise ProviderError(
                "malformed", f"{self.opts.label} sent a stream bonsai could not read ({detail})"
            ) from None

    async def _json_once(
        self, url: str, headers: dict[str, str], payload: bytes
    ) -> AsyncGenerator[dict[str, Any], None]:
        if self._closed:
            raise cancelled_error(self.opts.label)
        try:
            resp = await self._client.post(url, headers=headers, content=payload)
        except httpx.HTTPError as exc:
            raise self._map(exc, "open") from None
        if resp.status_code >= 400:
            raise self._status_error(resp, resp.content)
        try:
            data = resp.json()
        except ValueError:
            raise ProviderError(
                "malformed", f"{self.opts.label} returned a body that is not JSON"
            ) from None
        if not isinstance(data, dict):
            raise ProviderError("malformed", f"{self.opts.label} returned JSON that is no object")
        yield data

    async def _check_stream_response(self, resp: httpx.Response) -> None:
        if resp.status_code >= 400:
            raise self._status_error(resp, await resp.aread())
        ctype = resp.headers.get("content-type", "")
        if ctype.startswith("application/json"):
            detail = redact_error(provider_message(await resp.aread()), self.opts.secrets)
            raise ProviderError(
                "malformed",
                f"{self.opts.label} answered with plain JSON instead of an event stream: {detail}",
                status=resp.status_code,
            )

    def _status_error(self, resp: httpx.Response, body: bytes) -> ProviderError:
        return error_from_status(
            self.opts.label,
            resp.status_code,
            resp.headers,
            body,
            secrets=self.opts.secrets,
            now=self.opts.now(),
        )

    def _map(self, exc: httpx.HTTPError, phase: Phase) -> ProviderError:
        if self._closed:
            return cancelled_error(self.opts.label)
        return error_from_exception(
            self.opts.label,
            exc,
            phase,
            secrets=self.opts.secrets,
            connect_timeout_s=self.opts.connect_timeout_s,
            read_timeout_s=self.opts.read_timeout_s,
        )
