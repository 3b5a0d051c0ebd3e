"""One agent turn: model → tool calls → results → model … until the model stops.

**Invariants**
- Nothing half-written reaches the model's context: streamed text lives in the
  ``partials`` table until the step commits (its messages and the partial's deletion
  in one transaction: a reply is never kept beside its own partial); a cancelled or
  failed step is recorded as ``interrupted`` (visible to users, excluded from requests).
- Tool-call/result pairing is never broken: every committed call gets a
  result, a synthetic one ("cancelled", "denied", "failed") when needed.
- Every event carries a per-session sequence number; all attached clients
  receive the same events in the same order.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from bonsai.agent.tools.base import Tool, ToolContext, ToolFailure, ToolResult, parse_args
from bonsai.core.turn.tool_finish import finish_output
from bonsai.domain import Message, StoredMessage, ToolCall
from bonsai.protocol import models as m
from bonsai.services.providers.types import (
    ChatRequest,
    ProviderError,
    TextDelta,
    ToolCallDone,
    UsageReport,
)
from bonsai.services.redaction import known as known_keys
from bonsai.services.redaction import redact, redact_request
from bonsai.services.store.sessions import SessionStore
from bonsai.services.store.turns import (
    ToolOutputStore,
    ToolRuns,
    TurnStore,
    open_calls,
    synthetic_result,
)

log = logging.getLogger("bonsai.agent")

Emit = Callable[[m.ChatEvent], None]
Approve = Callable[[str, dict[str, Any], str | None], Awaitable[bool]]
BuildRequest = Callable[[list[StoredMessage], int], Awaitable[ChatRequest]]
Guard = Callable[[ToolCall, list[StoredMessage]], tuple[str, str]]
AfterTool = Callable[[ToolCall, ToolResult, list[StoredMessage]], ToolResult]

MAX_STEPS = 60
PARTIAL_EVERY_S = 0.25


class TurnStopped(Exception):
    """A loop guard ended the turn; the message is shown to the user."""


class StepTimedOut(TurnStopped):
    """A model step ran past ``step_budget_s``; the stream was closed."""


@dataclass
class TurnDeps:
    store: SessionStore
    turns: TurnStore
    outputs: ToolOutputStore
    session_id: str
    turn_id: str
    tools: list[Tool]
    tool_ctx: ToolContext
    emit: Emit
    approve: Approve
    build_request: BuildRequest
    stream: Callable[[ChatRequest], Any]  # provider.stream
    policy: dict[str, str] = field(default_factory=dict)
    guard: Guard | None = None
    after_tool: AfterTool | None = None
    # called after every model step; ``None`` when the server reported no usage
    on_usage: Callable[[UsageReport | None, ChatRequest, dict[str, int]], None] | None = None
    on_appended: Callable[[list[StoredMessage]], None] | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    # background data for this user turn (recalled memory), added after the user's words
    background: Callable[[str], str | None] | None = None
    # the history a turn starts from (read once; the turn appends to it in memory):
    # the log after the durable summary boundary when one holds; default: the whole log
    load_history: Callable[[], list[StoredMessage]] | None = None
    # a model step still streaming after this long is cancelled (None: no limit)
    step_budget_s: float | None = None
    # a streamed delta's text, emitted as ``emit(DeltaEvent(text=...))`` would (the daemon's
    # runtime takes the text as it is: no event model built per delta); None: ``emit``
    emit_delta: Callable[[str], None] | None = None


@dataclass
class StepOutput:
    # the reply's deltas, joined when the text is wanted (a long reply is not copied
    # again at every delta: appending to one string is quadratic in its length)
    parts: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    usage: UsageReport | None = None

    @property
    def text(self) -> str:
        if len(self.parts) > 1:
            self.parts[:] = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""


class Turn:
    def __init__(self, deps: TurnDeps) -> None:
        self.deps = deps
        self.usage_total: dict[str, int] = {"input": 0, "output": 0, "cached": 0}
        self.n = 0
        self.history: list[StoredMessage] = []

    # ------------------------------------------------------------ public
    async def run(self, user_text: str) -> str:
        deps = self.deps
        self.n = deps.turns.start(deps.session_id, deps.turn_id)
        load = deps.load_history or (lambda: deps.store.messages(deps.session_id))
        self.history = load()
        self._append([Message(role="user", content=user_text)])
        status = "done"
        try:
            await _let_others_run()  # a turn's start in short slices: others' deltas between
            note = deps.background(user_text) if deps.background is not None else None
            if note:
                self._append([Message(role="user", content=redact(note).text, name="memory")])
                await _let_others_run()
            await self._loop()
            deps.emit(m.DoneEvent())
        except asyncio.CancelledError:
            status = "cancelled"
            self._close_open_calls("cancelled by the user before it ran")
            deps.emit(m.CancelledEvent())
            raise
        except TurnStopped as stop:
            status = "stopped"
            if isinstance(stop, StepTimedOut):
                self._close_open_calls("not run: the model step ran out of time")
            deps.emit(m.ErrorEvent(message=str(stop)))
        except ProviderError as error:
            status = "error"
            self._close_open_calls("not run: the model call failed")
            deps.emit(m.ErrorEvent(message=str(error)))
        finally:
            deps.turns.clear_partial(deps.session_id, deps.turn_id)
            deps.turns.finish(deps.session_id, deps.turn_id, status, self.usage_total, deps.events)
        return status

    # ------------------------------------------------------------ the loop
    async def _loop(self) -> None:
        for _ in range(MAX_STEPS):
            request = redact_request(await self.deps.build_request(self.history, self.n))
            await _let_others_run()
            step = await self._stream_step(request)
            assistant = Message(role="assistant", content=step.text, tool_calls=tuple(step.calls))
            self._append([assistant])
            if not step.calls:
                return
            await self._run_calls(step.calls)
        raise TurnStopped(f"stopped after {MAX_STEPS} model steps in one turn")

    async def _stream_step(self, request: ChatRequest) -> StepOutput:
        out = StepOutput()
        last_save = time.monotonic()
        deps = self.deps
        budget = deps.step_budget_s
        emit_delta = deps.emit_delta or (lambda text: deps.emit(m.DeltaEvent(text=text)))
        try:
            async with (
                asyncio.timeout(budget),
                contextlib.aclosing(deps.stream(request)) as events,
            ):
                async for event in events:
                    if isinstance(event, TextDelta):
                        out.parts.append(event.text)
                        emit_delta(event.text)
                        if time.monotonic() - last_save > PARTIAL_EVERY_S:
                            deps.turns.save_partial(deps.session_id, deps.turn_id, out.text)
                            last_save = time.monotonic()
                    elif isinstance(event, ToolCallDone):
                        out.calls.append(event.call)
                    elif isinstance(event, UsageReport):
                        out.usage = event
        except TimeoutError:
            self._interrupt(out.text)
            raise StepTimedOut(
                f"turn stopped: the model step made no progress within {budget:g} s "
                f"(providers.step_budget_s); the reply so far is kept as interrupted"
            ) from None
        except (asyncio.CancelledError, ProviderError):
            self._interrupt(out.text)
            raise
        if out.usage is not None:
            self._account(out.usage, request)
        elif self.deps.on_usage is not None:  # no usage reported: our estimate stands
            self.deps.on_usage(None, request, self.usage_total)
        return out

    def _interrupt(self, text: str) -> None:
        if text:
            self._append([Message(role="assistant", content=text, status="interrupted")])

    def _account(self, usage: UsageReport, request: ChatRequest) -> None:
        self.usage_total["input"] += usage.input_tokens
        self.usage_total["output"] += usage.output_tokens
        self.usage_total["cached"] += usage.cached_input_tokens
        info = m.UsageInfo(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cached_input_tokens=usage.cached_input_tokens,
            cache_creation_tokens=usage.cache_creation_tokens,
        )
        self.deps.emit(m.UsageEvent(usage=info))
        if self.deps.on_usage is not None:
            self.deps.on_usage(usage, request, self.usage_total)

    # ------------------------------------------------------------ tools
    async def _run_calls(self, calls: list[ToolCall]) -> None:
        results: list[Message] = []
        try:
            for call in calls:
                results.append(await self._run_call(call))
        finally:
            done = {msg.tool_call_id for msg in results}
            for call in calls:
                if call.id not in done:
                    results.append(synthetic_result(call, "cancelled by the user before it ran"))
            self._append(results)

    async def _run_call(self, call: ToolCall) -> Message:
        deps = self.deps
        tool = next((t for t in deps.tools if t.name == call.name), None)
        args_preview: Any = _loads(call.arguments)
        deps.emit(m.ToolCallEvent(tool_call_id=call.id, name=call.name, args=args_preview))
        if tool is None:
            result = ToolResult(f"unknown tool {call.name!r}", is_error=True)
        else:
            result = await self._guarded(tool, call)
        message = self._finish_result(call, result)
        result_event = m.ToolResultEvent(
            tool_call_id=call.id,
            name=call.name,
            result=message.content[:4000],
            is_error=message.is_error,
        )
        deps.emit(result_event)
        return message

    async def _guarded(self, tool: Tool, call: ToolCall) -> ToolResult:
        deps = self.deps
        history = self.history
        deps.tool_ctx.history = history
        nudge = ""
        if deps.guard is not None:
            level, nudge = deps.guard(call, history)
            if level == "stop":
                raise TurnStopped(nudge)
        try:
            result = await self._execute(tool, call)
        except ToolFailure as failure:
            result = ToolResult(str(failure), is_error=True)
        if deps.after_tool is not None:
            result = deps.after_tool(call, result, history)
        if nudge:
            result = ToolResult(
                f"{result.content}\n\n[bonsai] {nudge}", result.evidence, result.is_error
            )
        return result

    async def _execute(self, tool: Tool, call: ToolCall) -> ToolResult:
        deps = self.deps
        args = parse_args(call.arguments)
        policy = deps.policy.get(tool.name, "ask" if tool.needs_approval else "allow")
        if policy == "deny":
            return ToolResult(f"{tool.name} is denied by the user's tool policy", is_error=True)
        if policy == "ask":
            preview = _tool_step(tool, "preview", lambda: _preview(tool, deps.tool_ctx, args))
            if not await deps.approve(tool.name, args, preview):
                return ToolResult("the user did not approve this call", is_error=True)
        runs = ToolRuns(deps.turns.conn)  # recorded first: after a crash, "not run" is true
        runs.starting(deps.session_id, call.id, _detail(tool.name, args))
        deps.tool_ctx.services.process_started = lambda pid, start: runs.process(
            deps.session_id, call.id, pid, start
        )
        try:
            return await tool.run(deps.tool_ctx, args)
        except ToolFailure:
            raise
        except (
            Exception
        ) as error:  # a tool's failure is a result the model sees, never the turn's end
            raise _as_failure(tool, "failed", error) from None

    def _finish_result(self, call: ToolCall, result: ToolResult) -> Message:
        """Redact secrets, spill the full text, truncate what the model sees."""
        finished = finish_output(
            result.content,
            self.deps.tool_ctx.settings.tool_output,
            call.id,
            secrets=known_keys(),
            redacted=result.redacted,
        )
        if finished.spill is not None:
            self.deps.outputs.save(self.deps.session_id, call.id, finished.spill)
        return Message(
            role="tool",
            content=finished.text,
            tool_call_id=call.id,
            name=call.name,
            evidence=result.evidence,
            is_error=result.is_error,
        )

    # ------------------------------------------------------------ log
    def _append(self, messages: list[Message]) -> None:
        deps = self.deps
        with deps.store.conn:  # one transaction: the messages, their calls answered, no partial
            stored = deps.store.append_many(deps.session_id, messages, turn_id=deps.turn_id)
            ToolRuns(deps.turns.conn).answered(
                deps.session_id, [msg.tool_call_id for msg in messages if msg.tool_call_id]
            )
            deps.turns.clear_partial(deps.session_id, deps.turn_id)
        self.history.extend(stored)
        if deps.on_appended is not None:
            deps.on_appended(stored)

    def _close_open_calls(self, why: str) -> None:
        """Give every committed call of this session a result (pairing invariant)."""
        missing = open_calls(self.history)
        if missing:
            self._append([synthetic_result(call, why) for call in missing])


async def _let_others_run() -> None:
    """End this slice of the loop: whatever else is ready (other sessions' deltas, a
    poll's answer) runs before the turn goes on. A turn's synchronous steps are each a
    millisecond or two; run back to back they held the loop for ten and more."""
    await asyncio.sleep(0)


def _detail(name: str, args: dict[str, Any]) -> str:
    """What a started call was doing, for the record a crash leaves."""
    if name == "bash":
        return f"$ {args.get('command', '')}"
    return f"{name} {json.dumps(args, sort_keys=True)[:300]}"


def _preview(tool: Tool, ctx: ToolContext, args: dict[str, Any]) -> str | None:
    return tool.preview(ctx, args) if tool.preview else None


def _tool_step(tool: Tool, step: str, run: Callable[[], str | None]) -> str | None:
    try:
        return run()
    except ToolFailure:
        raise
    except Exception as error:
        raise _as_failure(tool, f"{step} failed", error) from None


def _as_failure(tool: Tool, what: str, error: Exception) -> ToolFailure:
    """A short account of an unexpected error: OS and argument errors are the
    model's to correct; anything else is also logged with its traceback."""
    if isinstance(error, OSError):
        detail = error.strerror or str(error)
        name = error.filename if isinstance(error.filename, str) else ""
        detail = f"{name}: {detail}" if name else detail
    elif isinstance(error, (ValueError, TypeError, UnicodeError, OverflowError)):
        detail = str(error)
    else:
        log.warning("tool %s raised", tool.name, exc_info=error)
        detail = f"{type(error).__name__}: {error}"
    return ToolFailure(f"{tool.name} {what}: {detail[:500]}")


def _loads(raw: str) -> Any:
    try:
        return json.loads(raw or "{}")
    except json.JSONDecodeError:
        return raw
