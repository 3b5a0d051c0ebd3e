"""Read-only views in their own process: their own interpreter, their own GIL, the second core.

The polled views (``bonsai/ctx/get``, ``bonsai/ctx/text``) are computed in a child
``python -m bonsai.session.view_child`` that opens the database read-only and keeps
its own caches (messages, memos, stable parts, encoded rows), as the view worker
thread does. The daemon sends, per request, the request by name (method and
params, never a closure) and what lives only in its memory: the session's edits
count, the subscribers, and, only when they changed since the child last had them,
the settings snapshot (the merged sources the daemon validated: the child validates
the same dict, so it agrees with the daemon even after a file changed on disk and
before the daemon reloaded), the client's settings, the repository map text, the
server facts and the counters' calibration. The answer comes back as the encoded
bytes, spliced into the JSON-RPC response as they are.

Frames over the child's stdin and stdout: two big-endian lengths (a JSON header, a
body), then the header, then the body. A child that dies (or hangs past
``timeout_s``, then it is killed) fails its requests with :class:`ViewProcessGone`;
the view worker answers those on its thread, and a new child is started at once
(at most ``MAX_RESTARTS`` within ``RESTART_WINDOW_S``; past that the thread
serves alone, logged). The daemon's stop closes the child's stdin and reaps it.

The child is used once ``AUTO_CLIENTS`` clients are connected (several windows polling
while sessions stream, where the loop and the views would otherwise share one GIL);
with fewer the thread computes the views and no child is spawned.
``BONSAI_VIEW_PROCESS=1`` uses it from the first view, ``0`` never.

Start-up is a spawned interpreter, not a fork: the daemon has its event loop, its
threads and its SQLite connection long before a first view, and forking those is
unsafe; the spawn costs the child's imports once, off the loop, while the thread
serves the first views.

The child loads no tokenizer (~45 MB for o200k_base): its exact counts are the
daemon's, asked mid-view with a ``count`` frame (the estimator's name, the texts) over
a pair of pipes of their own and answered by a thread of the daemon with the estimator
it already holds (``services/tokens/remote.py``): a question never waits for the event
loop, which streaming may keep busy for tens of milliseconds at a turn's start while the
child, blocked on the answer, serves no other view. The child keeps what it was told.

The child's answers are read as frames inside the pipe's own callback (``_FrameReader``:
no task woken per part) and each waiting request is resolved there, so an answer reaches
its client in few turns of the loop; the pipes are widened to hold a whole answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import struct
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from bonsai import errors
from bonsai.own_python import python_command
from bonsai.protocol.models import ClientSettings, Wire
from bonsai.services.config import LoadedSettings
from bonsai.services.providers.discovery import ServerFacts
from bonsai.services.store.sessions import UnknownSession
from bonsai.services.tokens.remote import estimator_named
from bonsai.services.tokens.types import Estimator, TokenizerUnavailable
from bonsai.session import request_trace
from bonsai.session.host import Host

log = logging.getLogger("bonsai.views")
FRAME = struct.Struct(">II")  # header length, body length
Frame = tuple[dict[str, Any], bytes]
MAX_FRAME = 1 << 30
START_TIMEOUT_S = 120.0  # imports and the tokenizer, on a loaded machine
TIMEOUT_S = 60.0  # one view; past it the child is taken for hung and killed
MAX_RESTARTS = 5
PIPE_BYTES = 1 << 20  # each pipe's capacity, when the system allows it
RESTART_WINDOW_S = 60.0
DISABLE_ENV = "BONSAI_VIEW_PROCESS"  # "1": always, "0": never, unset: once several clients poll
# The child costs ~70 MB and a spawn: worth it once several clients (editor windows,
# open ledgers) poll views while sessions stream, not for one editor on one session.
AUTO_CLIENTS = 3
# Views are served one at a time in a child; ten sessions streaming together have their
# polls arrive together and queue behind each other there. A second session polled gets
# a second child (its own core, its own GIL), and each session's views stay in the one
# that holds its caches. Measured in docs/benchmarks.md (issue 19, eleventh round).
LANES = 2


class ViewProcessGone(RuntimeError):
    """The view process could not answer (not started, died, hung): ask the thread."""


def enabled() -> bool:
    """Not switched off (``BONSAI_VIEW_PROCESS=0``)."""
    return os.environ.get(DISABLE_ENV, "") != "0"


def always() -> bool:
    """Used from the first view on (``BONSAI_VIEW_PROCESS=1``), not only once
    ``AUTO_CLIENTS`` clients are connected."""
    return os.environ.get(DISABLE_ENV, "") == "1"


# ------------------------------------------------------------------ framing


def pack(header: dict[str, Any], body: bytes = b"") -> bytes:
    head = json.dumps(header, separators=(",", ":")).encode("utf-8")
    return FRAME.pack(len(head), len(body)) + head + body


def _sizes(raw: bytes) -> tuple[int, int]:
    n_head, n_body = FRAME.unpack(raw)
    if n_head > MAX_FRAME or n_body > MAX_FRAME:
        raise ValueError(f"a view frame of {n_head} + {n_body} bytes is refused")
    return n_head, n_body


class _FrameReader(asyncio.Protocol):
    """The child's output as frames, each handed to ``on_frame`` as soon as it is whole,
    inside the read's own callback (a stream reader would wake a task for each part);
    ``on_lost`` at its end or at a frame that cannot be read."""

    def __init__(
        self,
        on_frame: Callable[[dict[str, Any], bytes], None],
        on_lost: Callable[[Exception | None], None],
    ) -> None:
        self.on_frame, self.on_lost = on_frame, on_lost
        self.buffer = bytearray()
        self.transport: asyncio.BaseTransport | None = None
        self.broken = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self.broken:
            return
        if self.buffer:  # a frame begun in an earlier read: joined once, then read whole
            self.buffer += data
            data = bytes(self.buffer)
            self.buffer.clear()
        try:
            at = self._frames(data)
        except ValueError as error:  # a bad length or header: the framing is lost
            self.broken = True
            self.on_lost(error)
            return
        if at < len(data):
            self.buffer += memoryview(data)[at:]

    def _frames(self, data: bytes) -> int:
        """Hand on each whole frame in ``data``; where the rest (a part frame) begins.
        Each body is one slice of what was read (an answer of 100 KB read whole was
        copied four times on the loop, 12–13 µs; now once, 6.5–7 µs)."""
        at, size = 0, len(data)
        while size - at >= FRAME.size:
            n_head, n_body = _sizes(data[at : at + FRAME.size])
            start = at + FRAME.size
            end = start + n_head + n_body
            if size < end:
                break
            head = json.loads(data[start : start + n_head])
            body = data[start + n_head : end]
            at = end
            self.on_frame(head, body)
        return at

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.broken:
            self.broken = True
            self.on_lost(exc)


def _widen(pipe: IO[bytes]) -> None:
    """Let a pipe hold a whole answer (a ledger of a long log is some 100 KB; Linux's
    default is 64 KB, so a child writing one waited for the loop to read each part)."""
    with contextlib.suppress(OSError, AttributeError):
        fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)


def read_frame_sync(stream: IO[bytes]) -> Frame | None:
    """The next frame, or None at the end of the stream."""
    raw = stream.read(FRAME.size)
    if len(raw) < FRAME.size:
        return None
    n_head, n_body = _sizes(raw)
    head = stream.read(n_head)
    body = stream.read(n_body) if n_body else b""
    if len(head) < n_head or len(body) < n_body:
        return None
    return json.loads(head), body


# ------------------------------------------------------------------ what is sent


def settings_snapshot(loaded: LoadedSettings) -> dict[str, Any]:
    """What the child validates into the same settings (``services.config.validate``)."""
    return {"overrides": loaded.overrides, "problems": list(loaded.problems)}


@dataclass
class _Sent:
    """What the child has, as it was sent (compared by identity: cheap, and a value
    replaced in the daemon is a new object)."""

    settings: dict[str | None, LoadedSettings] = field(default_factory=dict)
    clients: dict[str, ClientSettings | None] = field(default_factory=dict)
    repomaps: dict[str, str | None] = field(default_factory=dict)
    facts: list[tuple[tuple[str, str], ServerFacts]] = field(default_factory=list)
    calibration: dict[str, str] = field(default_factory=dict)


def _state_of(host: Host, session_id: str, sent: _Sent) -> dict[str, Any]:
    """The parts of the daemon's memory the child lacks or has stale, for one view."""
    out: dict[str, Any] = {}
    workspace = host.store.get(session_id).workspace
    settings = []
    for where in (None, workspace):
        loaded = host.settings(where)
        if sent.settings.get(where) is not loaded:
            settings.append([where, settings_snapshot(loaded)])
            sent.settings[where] = loaded
    if settings:
        out["settings"] = settings
    hub = host.hub
    client = hub.client_settings.get(session_id)
    if session_id not in sent.clients or sent.clients[session_id] is not client:
        out["client"] = None if client is None else client.model_dump(mode="json")
        sent.clients[session_id] = client
    repomap = hub.repomap_text.get(session_id)
    if session_id not in sent.repomaps or sent.repomaps[session_id] is not repomap:
        out["repomap"] = repomap
        sent.repomaps[session_id] = repomap
    facts = hub.server_facts.entries()
    if len(facts) != len(sent.facts) or any(
        a[0] != b[0] or a[1] is not b[1] for a, b in zip(facts, sent.facts, strict=True)
    ):
        out["facts"] = [[url, model, f.model_dump(mode="json")] for (url, model), f in facts]
        sent.facts = facts
    calibration = {}
    for model, counter in list(hub.counters.items()):
        state = counter.calibration_state()
        text = state.model_dump_json() if state is not None else ""
        if text and sent.calibration.get(model) != text:
            calibration[model] = text
            sent.calibration[model] = text
    if calibration:
        out["calibration"] = calibration
    return out


def _subscribers(host: Host, session_id: str) -> list[list[Any]]:
    return [[c.id, c.kind, c.name, sorted(c.attached)] for c in host.subscribers(session_id)]


# ------------------------------------------------------------------ the daemon's side


@dataclass
class Asked:
    """A view asked of the child: its answer awaited (:meth:`ViewProcess.answer`) or handed
    to ``then`` as soon as it is read, inside the pipe's callback (:meth:`ViewProcess.outcome`
    tells it): no task has to wake for it."""

    ident: int
    waiting: asyncio.Future[Frame]
    timer: asyncio.TimerHandle
    trace: request_trace.Trace | None
    then: Callable[[Asked], None] | None = None


class ViewProcess:
    """The child, as the daemon drives it: started on first use, restarted after a death."""

    def __init__(
        self,
        home: Path,
        db_path: Path,
        timeout_s: float = TIMEOUT_S,
        start_timeout_s: float = START_TIMEOUT_S,
    ) -> None:
        self.home, self.db_path = home, db_path
        self.timeout_s, self.start_timeout_s = timeout_s, start_timeout_s
        self._proc: subprocess.Popen[bytes] | None = None
        self._transport: asyncio.WriteTransport | None = None
        self._read_transport: asyncio.ReadTransport | None = None
        self._starting: asyncio.Task[None] | None = None
        self._ready = False
        self._pending: dict[int, Asked] = {}
        self._estimators: dict[str, Estimator] = {}  # by name, as counted for the child
        self._host: Host | None = None  # the daemon, as the last view gave it
        self._next = 0
        self._sent = _Sent()
        self._starts: list[float] = []
        self.failed = False  # restarted too often: the thread serves alone
        self.answered = 0  # views the child answered (tests and benches)
        self.started = 0  # children started
        self.start_s = 0.0  # how long the last one took to be ready
        self.last_problem = ""

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def ready(self) -> bool:
        return self._ready

    def status(self) -> str:
        if self.failed:
            return f"failed ({self.last_problem}); views on the worker thread"
        restarts = self.started - 1
        after = f"; restarted {restarts}×, last: {self.last_problem}" if restarts > 0 else ""
        if self._ready:
            return f"running (pid {self.pid}{after})"
        return ("starting" if self._starting is not None else "not running") + after

    def start(self) -> None:
        """Start the child in the background (nothing waits for it)."""
        if self._ready or self._starting is not None or self.failed:
            return
        now = time.monotonic()
        self._starts = [t for t in self._starts if now - t < RESTART_WINDOW_S] + [now]
        if len(self._starts) > MAX_RESTARTS:
            self.failed = True
            log.warning(
                "the view process was restarted %s times within %.0fs (%s): views stay "
                "on the worker thread",
                MAX_RESTARTS,
                RESTART_WINDOW_S,
                self.last_problem,
            )
            return
        self.started += 1
        self._starting = asyncio.ensure_future(self._start())
        self._starting.add_done_callback(self._started)

    async def wait_ready(self, timeout: float = START_TIMEOUT_S) -> bool:
        """Start the child if it is not running and wait until it answers (tests, benches)."""
        self.start()
        deadline = time.monotonic() + timeout
        while not self._ready and not self.failed and time.monotonic() < deadline:
            starting = self._starting
            if starting is None:
                self.start()
                await asyncio.sleep(0.05)
                continue
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(starting), deadline - time.monotonic())
        return self._ready

    def _started(self, done: asyncio.Future[None]) -> None:
        self._starting = None
        error = None if done.cancelled() else done.exception()
        if error is not None:
            proc = self._proc
            self._kill()
            code = proc.returncode if proc is not None else None
            if isinstance(error, asyncio.IncompleteReadError):
                self.last_problem = f"exited at its start with code {code}"
            else:
                self.last_problem = f"did not start ({error!r})"
            log.warning("the view process %s; views on the thread", self.last_problem)

    async def _start(self) -> None:
        loop, began = asyncio.get_running_loop(), time.monotonic()
        self._sent = _Sent()  # a new child has nothing
        # the count questions' own pipes (questions in, answers out), served by a thread
        ask_r, ask_w = os.pipe()
        tell_r, tell_w = os.pipe()
        try:
            proc = self._proc = subprocess.Popen(
                python_command(
                    "-m",
                    "bonsai.session.view_child",
                    str(self.home),
                    str(self.db_path),
                    f"{ask_w},{tell_r}",
                ),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                close_fds=True,
                pass_fds=(ask_w, tell_r),
            )
        except BaseException:
            for fd in (ask_r, tell_w):
                os.close(fd)
            raise
        finally:
            for fd in (ask_w, tell_r):  # the child's ends: its exit closes the last copies
                os.close(fd)
        questions, answers = os.fdopen(ask_r, "rb"), os.fdopen(tell_w, "wb")
        threading.Thread(
            target=self._answer_counts,
            args=(questions, answers),
            name=f"bonsai-view-counts-{proc.pid}",
            daemon=True,
        ).start()
        assert proc.stdin is not None and proc.stdout is not None
        for pipe in (proc.stdin, proc.stdout, answers):
            _widen(pipe)
        ready: asyncio.Future[Frame] = loop.create_future()
        self._read_transport, _ = await loop.connect_read_pipe(
            lambda: _FrameReader(
                lambda head, body: self._frame(proc, ready, head, body),
                lambda error: self._lost(proc, ready, error),
            ),
            proc.stdout,
        )
        self._transport, _ = await loop.connect_write_pipe(asyncio.Protocol, proc.stdin)
        head, _ = await asyncio.wait_for(asyncio.shield(ready), self.start_timeout_s)
        if not head.get("ready"):
            raise ViewProcessGone(f"the view process said {head!r} instead of ready")
        self._ready = True
        self.start_s = time.monotonic() - began
        log.info("view process %s ready in %.2fs", proc.pid, self.start_s)

    def _frame(
        self,
        proc: subprocess.Popen[bytes],
        ready: asyncio.Future[Frame],
        head: dict[str, Any],
        body: bytes,
    ) -> None:
        """One frame from the child, handled as it is read (no task wakes for it): its
        first says it is ready, then answers (their waiters resolved here)."""
        if proc is not self._proc:
            return
        if not ready.done():
            ready.set_result((head, body))
            return
        head["_read"] = time.time()  # a trace's stamp (cheap; read only when traced)
        asked = self._pending.pop(int(head.get("id", -1)), None)
        if asked is not None and not asked.waiting.done():
            asked.timer.cancel()
            asked.waiting.set_result((head, body))
            if asked.then is not None:
                asked.then(asked)

    def _lost(
        self, proc: subprocess.Popen[bytes], ready: asyncio.Future[Frame], error: Exception | None
    ) -> None:
        """The child's output ended (it exited or was killed) or broke the framing."""
        if not ready.done():
            ready.set_exception(asyncio.IncompleteReadError(b"", None))
            ready.exception()  # retrieved: _started reports it
            return
        if proc is not self._proc:
            return
        self._kill()  # reaped: its exit code is known
        code = proc.returncode
        self.last_problem = (
            f"exited with code {code}" if code is not None else f"broke its pipe ({error})"
        )
        log.warning(
            "the view process %s %s; its views are answered on the thread and a new one starts",
            proc.pid,
            self.last_problem,
        )
        self._gone(ViewProcessGone(f"the view process {self.last_problem}"))
        # replaced now, not at the next view that misses the kept answers: a
        # session whose answers stay kept would otherwise never get one
        self.start()

    def _answer_counts(self, questions: IO[bytes], answers: IO[bytes]) -> None:
        """The child's count questions, answered on this thread (its own pipes: an answer
        never waits for the event loop, however busy streaming keeps it), until the child's
        end of them closes."""
        with questions, answers:
            while True:
                try:
                    frame = read_frame_sync(questions)
                except (OSError, ValueError):
                    return
                if frame is None:
                    return
                answer, counts = self._counted(*frame)
                try:
                    answers.write(pack(answer, counts))
                    answers.flush()
                except OSError:  # the child is gone
                    return

    def _counted(self, head: dict[str, Any], body: bytes) -> Frame:
        """One count question's answer: the texts' exact counts by the estimator named."""
        try:
            name = str(head["estimator"])
            estimator = self._estimators.get(name)
            if estimator is None:
                host = self._host
                if host is None:
                    raise TokenizerUnavailable("no view was asked")
                have = [c.estimator for c in list(host.hub.counters.values())]
                cache_dir = host.home / "cache" / "tiktoken"
                estimator = self._estimators[name] = estimator_named(name, cache_dir, have)
            numbers = [estimator.count_text(str(t)) for t in json.loads(body)]
        except Exception as error:  # the child's view fails; the thread answers it
            log.warning("counting for the view process failed: %s", error)
            return {"counted": head.get("count"), "ok": False, "message": str(error)}, b""
        return {"counted": head["count"], "ok": True}, json.dumps(numbers).encode()

    def _gone(self, error: Exception) -> None:
        self._ready = False
        pending, self._pending = self._pending, {}
        for asked in pending.values():
            if not asked.waiting.done():
                asked.timer.cancel()
                asked.waiting.set_exception(error)
                if asked.then is not None:
                    asked.then(asked)
        self._kill()

    async def ask(
        self,
        host: Host,
        method: str,
        params: Wire,
        session_id: str,
        edits: int | None,
    ) -> bytes:
        """The view's encoded answer from the child; :class:`ViewProcessGone` when it
        cannot give one (the caller asks the thread). A user error (a node that does not
        exist) is raised as the thread would raise it."""
        return await self.answer(self.send(host, method, params, session_id, edits))

    def send(
        self,
        host: Host,
        method: str,
        params: Wire,
        session_id: str,
        edits: int | None,
        then: Callable[[Asked], None] | None = None,
    ) -> Asked:
        """Ask the child now, without waiting (:meth:`answer` waits, or ``then`` is called
        with the answer as soon as it is read); raises :class:`ViewProcessGone` when it is
        not running."""
        if not self._ready or self._transport is None:
            self.start()
            raise ViewProcessGone("the view process is not running")
        self._host = host
        self._next += 1
        ident = self._next
        header: dict[str, Any] = {
            "id": ident,
            "method": method,
            "params": params.model_dump(mode="json", by_alias=True),
            "session": session_id,
            "edits": edits,
            "subscribers": _subscribers(host, session_id),
            **_state_of(host, session_id, self._sent),
        }
        trace = request_trace.current()
        if trace is not None:
            header["trace"] = True  # the child stamps its read, start and end
        loop = asyncio.get_running_loop()
        waiting: asyncio.Future[Frame] = loop.create_future()
        if trace is not None:
            trace.mark("asked")  # before the write: the child may read it at once
        self._transport.write(pack(header))
        # a timer, not wait_for: the answer wakes the waiting task directly, one loop step
        timer = loop.call_later(self.timeout_s, self._timed_out, waiting, method)
        asked = self._pending[ident] = Asked(ident, waiting, timer, trace, then)
        return asked

    async def answer(self, asked: Asked) -> bytes:
        """The child's answer to what :meth:`send` asked."""
        try:
            await asked.waiting
        finally:
            asked.timer.cancel()
            self._pending.pop(asked.ident, None)
        return self.outcome(asked)

    def outcome(self, asked: Asked) -> bytes:
        """The answer's bytes, once it came; raises what the thread would have raised, or
        :class:`ViewProcessGone` when the child could not answer."""
        head, body = asked.waiting.result()
        if asked.trace is not None:
            for name, at in head.get("marks", []):  # its read, start, count questions, end
                asked.trace.mark(str(name), float(at))
            asked.trace.mark("child_answer_read", head.get("_read"))
        if head.get("ok"):
            self.answered += 1
            return body
        raise _error_of(head)

    def _timed_out(self, waiting: asyncio.Future[Frame], method: str) -> None:
        if waiting.done():
            return
        self.last_problem = f"did not answer {method} within {self.timeout_s:.0f}s"
        log.warning("the view process %s %s: killed, restarted", self.pid, self.last_problem)
        self._gone(ViewProcessGone(f"the view process {self.last_problem}"))
        self.start()

    def forget(self, session_id: str) -> None:
        for sent in (self._sent.clients, self._sent.repomaps):
            sent.pop(session_id, None)
        if self._ready and self._transport is not None:
            self._transport.write(pack({"forget": session_id}))

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        self._ready = False
        for transport in (self._transport, self._read_transport):
            if transport is not None:
                with contextlib.suppress(RuntimeError):  # the loop already closed
                    transport.close()  # unregisters the pipe from the loop at once
        self._transport = self._read_transport = None
        if proc is not None:
            with contextlib.suppress(OSError):
                proc.kill()
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                proc.wait(timeout=5)
            for pipe in (proc.stdin, proc.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()

    def close(self) -> None:
        """Stop the child: its stdin closed (it exits at the end of its input), then reaped;
        killed if it has not gone within a few seconds."""
        if self._starting is not None:
            self._starting.cancel()
            self._starting = None
        proc = self._proc
        if proc is not None and proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()  # the child's end of input, now (not at the loop's next turn)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=3)
        self._gone(ViewProcessGone("the daemon is stopping"))


def _error_of(head: dict[str, Any]) -> Exception:
    """The child's error as the thread would have raised it."""
    kind, message = str(head.get("error", "")), str(head.get("message", ""))
    if kind == "UnknownSession":
        return UnknownSession(str(head.get("session", "")))
    found = getattr(errors, kind, None)
    if isinstance(found, type) and issubclass(found, errors.BonsaiError):
        return found(message)
    return ViewProcessGone(f"the view process failed: {kind}: {message}")
