"""The HTTP side shared by both clients: one ``httpx.AsyncClient``, timeouts,
retries, SSE framing and error mapping. Clients only build bodies and decode
events.

With a ``ClientPool`` in the options the client is the pool's, shared with every
other provider of the same shape (its connections kept alive across turns) and
released at ``aclose``; without one (tests, one-off commands) it is this
transport's own and closed with it."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

import httpx

from bonsai.services.providers import body_json
from bonsai.services.providers.aio_backend import AsyncioTransport
from bonsai.services.providers.clients import ClientPool, ClientShape, HttpClient
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

log = logging.getLogger("bonsai.providers")

# a kept connection the server closed just as a request went out fails with one of
# these before any byte of a response: the request is sent again once, on a new one
STALE_CONNECTION = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)

# what is read of a reply after its last event before its connection is given up on
DRAIN_BYTES = 64 * 1024
DRAIN_S = 1.0

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
    # the daemon's shared clients, and this provider's shape in them (None: a client of its own)
    clients: ClientPool | None = None
    shape: ClientShape | None = None


def new_client(opts: TransportOptions) -> HttpClient:
    """A client with ``opts``' timeouts, its connections on plain asyncio (``aio_backend``);
    a test's own transport wins."""
    timeout = httpx.Timeout(
        connect=opts.connect_timeout_s,
        read=opts.read_timeout_s,
        write=opts.read_timeout_s,
        pool=opts.connect_timeout_s,
    )
    own = opts.transport or AsyncioTransport(verify=ssl_context())
    client = httpx.AsyncClient(timeout=timeout, transport=own, verify=ssl_context())
    return HttpClient(client, own)


def encode_body(body: dict[str, Any]) -> bytes:
    """Compact, deterministic JSON: identical requests give identical bytes (the
    standard library's, made faster where that is certain: ``body_json``)."""
    return body_json.encode(body)


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


async def _drain(resp: httpx.Response) -> None:
    """The rest of a reply after its last event (a chunked body's last chunk, usually
    in the same read): read, so its connection is kept for the next call. A server
    still sending past the end (or keeping the stream open) costs the connection only."""
    left = DRAIN_BYTES
    if not isinstance(resp.stream, httpx.AsyncByteStream):
        return
    try:
        async with asyncio.timeout(DRAIN_S):
            async for piece in resp.stream:
                left -= len(piece)
                if left < 0:
                    return
    except (TimeoutError, httpx.HTTPError):
        return


class Transport:
    def __init__(self, opts: TransportOptions) -> None:
        self.opts = opts
        self._pool = opts.clients if opts.transport is None and opts.shape is not None else None
        if self._pool is not None and opts.shape is not None:
            self._http = self._pool.lease(opts.shape, lambda: new_client(opts))
        else:
            self._http = new_client(opts)
        self._client = self._http.client
        self._open: set[httpx.Response] = set()  # streams in flight (closed by ``aclose``)
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
        """Stop this provider's calls in flight (they raise ``cancelled``) and let go of
        the client: the pool's stays open for the others, its own is closed."""
        if self._closed:
            return
        self._closed = True
        for resp in list(self._open):
            await resp.aclose()  # an unfinished response's connection is closed, not kept
        if self._pool is not None:
            await self._pool.release(self._http)
        else:
            await self._client.aclose()

    async def _stream_once(
        self, url: str, headers: dict[str, str], payload: bytes, decode: Decoder
    ) -> AsyncGenerator[ProviderEvent, None]:
        if self._closed:
            raise cancelled_error(self.opts.label)
        phase: Phase = "open"
        again = self._http.has_idle(url)  # a kept connection may have gone stale meanwhile
        while True:
            try:
                async with self._client.stream(
                    "POST", url, headers=headers, content=payload
                ) as resp:
                    self._open.add(resp)
                    try:
                        await self._check_stream_response(resp)
                        phase = "body"
                        async with aclosing(decode(sse_events(resp))) as events:
                            async for event in events:
                                yield event
                                if self._closed:  # closed while the caller held the event
                                    raise cancelled_error(self.opts.label)
                        await _drain(resp)
                    finally:
                        self._open.discard(resp)
                return
            except httpx.HTTPError as exc:
                if again and phase == "open" and isinstance(exc, STALE_CONNECTION):
                    again = False  # nothing was received: send it once more, on a new one
                    log.info("%s: a kept connection was closed; reopening", self.opts.label)
                    continue
                raise self._map(exc, phase) from None
            except (KeyError, TypeError, AttributeError, ValueError) as exc:
                # a shape no decoder check anticipated: still the provider's data, one error type
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
            detail = redact_error(provider_message(resp.content), self.opts.secrets)
            raise ProviderError(
                "malformed", f"{self.opts.label} returned a body that is not JSON: {detail}"
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
        if ctype.startswith("text/html"):
            # a proxy's sign-in page or a web server at the base URL: another try gets the same
            detail = redact_error(provider_message(await resp.aread()), self.opts.secrets)
            raise ProviderError(
                "malformed",
                f"{self.opts.label} answered with a web page (text/html) instead of an event "
                f"stream: {detail}; is a proxy in the way, or base_url not the API's?",
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
