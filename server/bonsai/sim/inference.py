"""Serve one inference request on either wire: check, decide, bill, stream.

The wire-specific parts (validation, rendering, usage accounting) come in as a
``Wire``; this module owns the order of things and the fault behaviour.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from bonsai.sim import anthropic_wire, openai_wire
from bonsai.sim.faults import MALFORMED_FRAME, Fault
from bonsai.sim.frames import ReplyUsage
from bonsai.sim.http11 import HttpError, HttpRequest, ResponseWriter
from bonsai.sim.prompt import anthropic_prompt, openai_prompt, output_tokens
from bonsai.sim.script import Reply
from bonsai.sim.sim_state import RecordedRequest, SimState

Alive = Callable[[], bool]


class DropConnection(Exception):
    """Close the socket now, without finishing the response."""


@dataclass(frozen=True)
class Wire:
    name: str
    validate: Callable[[dict[str, Any], dict[str, str]], str | None]
    last_message: Callable[[dict[str, Any]], tuple[str, str]]
    prompt_usage: Callable[[SimState, dict[str, Any]], tuple[int, int, int]]
    frames: Callable[[Reply, int, dict[str, Any], ReplyUsage], list[bytes]]
    complete: Callable[[Reply, int, dict[str, Any], ReplyUsage], dict[str, Any]]
    error: Callable[[int, str], dict[str, Any]]
    presented_key: Callable[[dict[str, str]], str]
    id_header: str


def _openai_usage(state: SimState, body: dict[str, Any]) -> tuple[int, int, int]:
    tokens = openai_prompt(body)
    cache = state.openai_cache(str(body["model"]))
    cached = cache.lookup(tokens)
    cache.store(tokens)
    return len(tokens), cached, 0


def _anthropic_usage(state: SimState, body: dict[str, Any]) -> tuple[int, int, int]:
    tokens, breakpoints = anthropic_prompt(body)
    cache = state.anthropic_cache(str(body["model"]))
    result = cache.lookup(tokens, breakpoints)
    cache.store(tokens, breakpoints)
    return len(tokens), result.read, result.written


def _openai_ctx(n: int, body: dict[str, Any]) -> openai_wire.Ctx:
    include = bool((body.get("stream_options") or {}).get("include_usage"))
    return openai_wire.Ctx(n=n, model=str(body["model"]), include_usage=include)


def _bearer(headers: dict[str, str]) -> str:
    return headers.get("authorization", "").removeprefix("Bearer ").strip()


OPENAI = Wire(
    name="openai",
    validate=lambda body, _headers: openai_wire.validate(body),
    last_message=openai_wire.last_message,
    prompt_usage=_openai_usage,
    frames=lambda r, n, b, u: openai_wire.stream_frames(r, _openai_ctx(n, b), u),
    complete=lambda r, n, b, u: openai_wire.completion_json(r, _openai_ctx(n, b), u),
    error=openai_wire.error_json,
    presented_key=_bearer,
    id_header="x-request-id",
)

ANTHROPIC = Wire(
    name="anthropic",
    validate=lambda body, headers: anthropic_wire.validate(body, headers, counting=False),
    last_message=anthropic_wire.last_message,
    prompt_usage=_anthropic_usage,
    frames=lambda r, n, b, u: anthropic_wire.stream_frames(
        r, anthropic_wire.Ctx(n, str(b["model"])), u
    ),
    complete=lambda r, n, b, u: anthropic_wire.message_json(
        r, anthropic_wire.Ctx(n, str(b["model"])), u
    ),
    error=anthropic_wire.error_json,
    presented_key=lambda headers: headers.get("x-api-key", ""),
    id_header="request-id",
)


def _auth_error(wire: Wire, presented: str) -> str:
    if wire is OPENAI:
        # The real API echoes (a masked form of) the key; echoing it whole lets
        # tests prove that clients redact whatever the server sends back.
        return f"Incorrect API key provided: {presented or '(none)'}."
    return "invalid x-api-key"


async def send_error(
    wire: Wire, out: ResponseWriter, status: int, message: str, extra: dict[str, str] | None = None
) -> None:
    await out.send_json(status, wire.error(status, message), extra)


async def _fail_http(wire: Wire, out: ResponseWriter, fault: Fault, rec: RecordedRequest) -> None:
    headers = {"retry-after": fault.retry_after} if fault.retry_after else {}
    if fault.kind == "html_page":
        await out.send_bytes(fault.http_status, fault.html_page, "text/html", headers)
        rec.outcome = f"fault:{fault.kind}"
        return
    await send_error(wire, out, fault.http_status, fault.error_message, headers)
    rec.outcome = f"fault:{fault.kind}"


async def _wait_first_byte(delay_s: float, alive: Alive) -> bool:
    """Sleep ``delay_s`` unless the client leaves first; True if still connected."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + delay_s
    while loop.time() < deadline:
        if not alive():
            return False
        await asyncio.sleep(min(0.02, max(deadline - loop.time(), 0)))
    return alive()


async def _admit(
    wire: Wire, state: SimState, req: HttpRequest, out: ResponseWriter, rec: RecordedRequest
) -> dict[str, Any] | None:
    """The request body if it may be served; otherwise answer with the API's error."""
    body = req.json()
    if not isinstance(body, dict):
        raise HttpError(400, "request body must be a JSON object")
    rec.body = body
    rec.body_sha256 = hashlib.sha256(req.body).hexdigest()
    key = state.script.require_api_key
    presented = wire.presented_key(req.headers)
    if key is not None and presented != key:
        rec.outcome = "fault:auth"
        await send_error(wire, out, 401, _auth_error(wire, presented))
        return None
    if error := wire.validate(body, req.headers):
        rec.outcome = "error"
        await send_error(wire, out, 400, error)
        return None
    return body


async def serve_inference(
    wire: Wire,
    state: SimState,
    req: HttpRequest,
    out: ResponseWriter,
    alive: Alive,
    rec: RecordedRequest,
) -> None:
    body = await _admit(wire, state, req, out, rec)
    if body is None:
        return
    decision = state.runner.decide(*wire.last_message(body))
    rec.source = decision.source
    fault = decision.fault
    if fault is not None and fault.is_http_error:
        return await _fail_http(wire, out, fault, rec)
    usage = _usage(wire, state, body, decision.reply)
    rec.usage = asdict(usage)
    delay = fault.delay_s if fault is not None and fault.kind == "slow_first_byte" else 0.0
    if delay and not await _wait_first_byte(delay, alive):
        rec.outcome = "client_closed"
        return
    headers = {wire.id_header: f"req_sim{rec.n:06d}"}
    if body.get("stream"):
        shown = body if state.script.usage else {**body, "stream_options": None}
        frames = wire.frames(decision.reply, rec.n, shown, usage)
        if fault is not None and fault.kind == "stream_error":
            frames = _with_error_frame(wire, frames, fault, wire.presented_key(req.headers))
        return await _stream(out, frames, headers, fault, state.script.latency_ms, alive, rec)
    complete = wire.complete(decision.reply, rec.n, body, usage)
    return await _complete(out, complete, headers, fault, rec)


def _usage(wire: Wire, state: SimState, body: dict[str, Any], reply: Reply) -> ReplyUsage:
    prompt, cached, written = wire.prompt_usage(state, body)
    calls = [(c.name, c.arguments_json()) for c in reply.tool_calls]
    return ReplyUsage(prompt, cached, written, output_tokens(reply.text, calls))


def _with_error_frame(wire: Wire, frames: list[bytes], fault: Fault, key: str) -> list[bytes]:
    """The stream cut after ``after_events`` frames by an error object, as providers
    report failures mid-stream (``{api_key}`` in the message echoes the key presented)."""
    payload = json.dumps(wire.error(500, fault.error_message.replace("{api_key}", key or "")))
    event = "event: error\n" if wire is ANTHROPIC else ""
    cut = min(fault.after_events, len(frames))
    rec_frames = frames[:cut]
    return [*rec_frames, f"{event}data: {payload}\n\n".encode()]


async def _stream(
    out: ResponseWriter,
    frames: list[bytes],
    headers: dict[str, str],
    fault: Fault | None,
    latency_ms: float,
    alive: Alive,
    rec: RecordedRequest,
) -> None:
    cut = min(fault.after_events, len(frames) - 1) if fault else -1
    await out.start_stream(headers)
    for i, frame in enumerate(frames):
        if latency_ms:
            await asyncio.sleep(latency_ms / 1000)
        if not alive():
            rec.outcome = "client_closed"
            raise DropConnection
        stall = fault.delay_s if fault is not None and i == cut and fault.kind == "stall" else 0
        if stall and not await _wait_first_byte(stall, alive):
            rec.outcome = "client_closed"
            raise DropConnection
        if fault is not None and i == cut and fault.kind in ("drop", "malformed"):
            rec.outcome = f"fault:{fault.kind}"
            if fault.kind == "drop":
                raise DropConnection
            await out.send_chunk(MALFORMED_FRAME)
            break
        await out.send_chunk(frame)
    else:
        rec.outcome = f"fault:{fault.kind}" if fault is not None else "ok"
    await out.end_stream()


async def _complete(
    out: ResponseWriter,
    obj: dict[str, Any],
    headers: dict[str, str],
    fault: Fault | None,
    rec: RecordedRequest,
) -> None:
    if fault is not None and fault.kind == "malformed":
        rec.outcome = "fault:malformed"
        return await out.send_bytes(200, b'{"truncated":', "application/json", headers)
    if fault is not None and fault.kind == "drop":
        rec.outcome = "fault:drop"
        raise DropConnection
    rec.outcome = "ok"
    await out.send_json(200, obj, headers)


async def serve_count_tokens(
    state: SimState, req: HttpRequest, out: ResponseWriter, rec: RecordedRequest
) -> None:
    body = req.json()
    if not isinstance(body, dict):
        raise HttpError(400, "request body must be a JSON object")
    rec.body = body
    rec.body_sha256 = hashlib.sha256(req.body).hexdigest()
    key = state.script.require_api_key
    if key is not None and req.headers.get("x-api-key", "") != key:
        rec.outcome = "fault:auth"
        return await send_error(ANTHROPIC, out, 401, "invalid x-api-key")
    if error := anthropic_wire.validate(body, req.headers, counting=True):
        rec.outcome = "error"
        return await send_error(ANTHROPIC, out, 400, error)
    tokens, _ = anthropic_prompt(body)
    rec.outcome = "ok"
    await out.send_json(200, {"input_tokens": len(tokens)})
