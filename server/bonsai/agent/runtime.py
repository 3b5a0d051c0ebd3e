"""Per-session runtime: a queue of turns, cancellation, and the event stream.

**Invariant:** turns of one session never interleave: ``send`` queues them
behind a per-session lock, in arrival order. Events get a per-session
sequence number; the events of the running turn are kept so a client that
attaches mid-stream can catch up.

**Coalescing:** deltas emitted in one step of the event loop (several SSE
chunks that one network read brought in) go out as one ``delta`` event with
their texts joined, at the end of that step. An idle daemon reads one chunk at
a time, so this adds no wait; a busy one sends fewer, larger events instead of
falling behind. Any other event first sends the deltas before it, so the order
of the stream is unchanged.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from bonsai.protocol import models as m
from bonsai.services.env_errors import runtime_problem
from bonsai.services.providers.types import ProviderError

log = logging.getLogger("bonsai.agent")

SETTLE_S = 30.0  # how long a tree or retry request waits for a finished turn's post-turn steps
SETTLE_POLL_S = 0.02
# how long a turn still streaming may take to send its end before a tree or retry request
# is refused: its last delta may be shown before the provider's stream has ended
STREAM_END_GRACE_S = 1.0
RunTurn = Callable[[str, str], Awaitable[str]]  # (turn_id, text) -> status
Publish = Callable[[m.ChatEventWire], None]


@dataclass
class SessionRuntime:
    session_id: str
    publish: Publish
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    tasks: dict[str, asyncio.Task[str]] = field(default_factory=dict)
    running: str | None = None
    # the running turn has sent its end (done or error) and runs its post-turn steps
    settling: bool = False
    backlog: list[m.ChatEventWire] = field(default_factory=list)
    _seq: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    # the turn and the texts of deltas emitted in this loop step, not yet published
    _pending: tuple[str, list[str]] | None = None

    def emit(self, turn_id: str, event: m.ChatEvent) -> None:
        if isinstance(event, m.DeltaEvent):
            self.emit_delta(turn_id, event.text)
            return
        self.flush()
        self._publish(turn_id, event)

    def flush(self) -> None:
        """Publish the deltas still waiting for the end of the loop step, as one."""
        pending, self._pending = self._pending, None
        if pending is not None:
            turn_id, texts = pending
            text = texts[0] if len(texts) == 1 else "".join(texts)
            seq = next(self._seq)  # the wire model at once: no event model in between
            full = m.ChatDeltaParams(
                session_id=self.session_id, turn_id=turn_id, seq=seq, text=text
            )
            if turn_id == self.running:
                self.backlog.append(full)
            self.publish(full)

    def emit_delta(self, turn_id: str, text: str) -> None:
        """A streamed delta's text (what ``emit`` does with a ``DeltaEvent``, without one)."""
        pending = self._pending
        if pending is not None and pending[0] == turn_id:
            pending[1].append(text)
            return
        self.flush()
        self._pending = (turn_id, [text])
        try:
            asyncio.get_running_loop().call_soon(self.flush)
        except RuntimeError:  # no loop (a synchronous caller): nothing to wait for
            self.flush()

    def _publish(self, turn_id: str, event: m.ChatEvent) -> None:
        if turn_id == self.running and isinstance(
            event, m.DoneEvent | m.ErrorEvent | m.CancelledEvent
        ):
            self.settling = True
        seq = next(self._seq)
        full = m.chat_event_params(event, session_id=self.session_id, turn_id=turn_id, seq=seq)
        if turn_id == self.running:
            self.backlog.append(full)
        self.publish(full)

    def send(self, text: str, run_turn: RunTurn) -> str:
        turn_id = f"t_{uuid.uuid4().hex[:12]}"
        task = asyncio.ensure_future(self._queued(turn_id, text, run_turn))
        self.tasks[turn_id] = task
        task.add_done_callback(lambda _: self.tasks.pop(turn_id, None))
        return turn_id

    async def _queued(self, turn_id: str, text: str, run_turn: RunTurn) -> str:
        try:
            await self.lock.acquire()
        except asyncio.CancelledError:  # cancelled in the queue: it ends as a running one does
            self.emit(turn_id, m.CancelledEvent())
            return "cancelled"
        try:
            return await self._run(turn_id, text, run_turn)
        finally:
            self.lock.release()

    async def _run(self, turn_id: str, text: str, run_turn: RunTurn) -> str:
        self.running, self.backlog, self.settling = turn_id, [], False
        try:
            return await run_turn(turn_id, text)
        except asyncio.CancelledError:
            if not self.settling:  # cancelled before its turn began: no end was sent yet
                self.emit(turn_id, m.CancelledEvent())
            return "cancelled"
        except ProviderError as error:  # e.g. a key the provider refuses: the user's to fix
            self.emit(turn_id, m.ErrorEvent(message=error.message))
            return "error"
        except Exception as error:  # a bug must end the turn, not the daemon
            log.exception("turn %s failed", turn_id)
            told = runtime_problem(error)  # a full disk, a read-only file: path, cause, fix
            self.emit(turn_id, m.ErrorEvent(message=told or f"internal error: {error}"))
            return "error"
        finally:
            self.running, self.settling = None, False

    async def settled(
        self, within_s: float = SETTLE_S, grace_s: float = STREAM_END_GRACE_S
    ) -> bool:
        """Whether no turn runs, waiting up to ``within_s`` for one that has already
        sent its end (its reply is shown) to finish its post-turn steps; a turn still
        streaming is waited for only ``grace_s`` (a request sent as its last delta
        arrived, before its end), then refused."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        while self.running is not None:
            waited = loop.time() - start
            if waited >= (within_s if self.settling else min(grace_s, within_s)):
                return False
            await asyncio.sleep(SETTLE_POLL_S)
        return True

    def cancel(self, turn_id: str | None) -> bool:
        targets = [turn_id] if turn_id else list(self.tasks)
        cancelled = False
        for tid in targets:
            task = self.tasks.get(tid or "")
            if task is not None and not task.done():
                task.cancel()
                cancelled = True
        return cancelled

    def catch_up(self) -> list[m.ChatEventWire]:
        """Events already streamed in the running turn (for a client attaching now)."""
        return list(self.backlog) if self.running else []

    async def idle(self) -> None:
        for task in list(self.tasks.values()):
            try:
                await task
            except asyncio.CancelledError:
                pass
