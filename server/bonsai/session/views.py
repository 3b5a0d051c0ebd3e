"""Read-only views off the event loop.

A view (the ledger, the wire and turns views, a node's text) is computed on
one worker thread over its own database connection, inside one read
transaction: an immutable snapshot of the log, never blocking the loop that
streams turns. The view sees what was committed before the request arrived.

A view asked for with a ``key`` is kept and served again while nothing it
derives from has moved: the session's and the global write versions
(:mod:`bonsai.session.versions`), the settings in force, the repository map
and the attached clients; and for at most ``FRESH_S`` (files on disk, such as
steering files, are read again after that: a view that moved within it reuses the
system parts before the volatile tail, :mod:`bonsai.agent.parts_cache`).

A view may hand back :class:`Encoded`: its result already encoded as JSON on the
worker, so a kept view is answered as the same bytes again, and the loop never
encodes a large result (the wire view of a long session) between two streamed events.

Views asked for with the same ``key`` while one is computing share it: two editors
open on one session cost one computation, and its answer is the one a fresh view
would give (it started after both asked). :meth:`ViewWorker.warm` runs a job on the
worker without waiting for it (the tokenizer, loaded at the daemon's start, so a
first view does not pay seconds for it).

A view asked with a ``key`` is **watched** for ``WATCH_S``: when a write moves its
session's log (or the global version) meanwhile, the view is computed again in the
session's view process as soon as the write is done, not when the next poll comes.
The poll then finds it kept (or joins it computing). Ten ledgers open on ten streaming
sessions poll at the same moment; computing each view when its own session writes
spreads that work over time, so a poll waits for fewer views queued ahead of it in its lane. A
watched view costs one computation per write instead of one per poll after a write.
Only the view process computes ahead, never the thread, which shares the loop's GIL.
One step's writes make one computation: the refresh runs ``EAGER_DELAY_S`` after the
first of them, at most one computation per view is in flight, and it waits while a
transaction is open.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import functools
import json
import logging
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

import apsw

from bonsai.agent.parts_cache import StablePartsCache
from bonsai.core.context import AssemblyMemo
from bonsai.protocol.models import Wire
from bonsai.services.config import LoadedSettings
from bonsai.services.store.sessions import SessionStore
from bonsai.session import request_trace, versions, view_process
from bonsai.session.baseline import ensure_baseline
from bonsai.session.host import Host, Subscriber
from bonsai.session.hub import SessionHub
from bonsai.session.service_pool import ServicePool
from bonsai.session.view_process import Asked, ViewProcess, ViewProcessGone
from bonsai.session.view_store import CachedStore, MessageCache

log = logging.getLogger("bonsai.views")
T = TypeVar("T")
BUSY_TIMEOUT_MS = 5_000
FRESH_S = 1.0
# The worker shares the GIL with the loop: while a view computes, the loop waits up to
# the interpreter's switch interval (5 ms by default) each time it takes the GIL back
# (after every socket read or write and every SQLite statement, several per streamed
# event). Once a worker exists the interval is at most this, so each wait is ~0.1 ms
# (1 ms before: the run with pollers streamed p95 97/146 ms against 118/197 ms, two
# pairs of runs at load 10, bench/load.py --polling).
LOOP_GIL_WAIT_S = 0.0001
WATCH_S = 2.0  # a view asked with a key within this is computed again when its log moves
# after a write, how long the refresh waits: a step's writes come within a few tens of
# ms (a turn's start, its reply, its usage), and each would otherwise be one computation
EAGER_DELAY_S = 0.025


@dataclass(frozen=True, slots=True)
class Encoded:
    """A request's result as JSON bytes, encoded once (off the loop) and sent as it is."""

    body: bytes

    @classmethod
    def of(cls, result: Wire) -> Encoded:
        return cls(result.model_dump_json(by_alias=True, exclude_none=True).encode("utf-8"))

    def dump(self) -> dict[str, Any]:
        """The result as a dict again (for a caller that is not the wire)."""
        return cast(dict[str, Any], json.loads(self.body))


@dataclass
class _Kept:
    stamp: tuple[Any, ...]
    settings: LoadedSettings
    at: float
    value: Any


# what a request waiting for a view is handed at the computation's end: the value, or
# the error (an exception, or a cancellation: the computation was cancelled)
Waiter = Callable[[Any, "BaseException | None"], None]


@dataclass
class _Running:
    stamp: tuple[Any, ...]
    settings: LoadedSettings
    # each request waiting for this view, called by the computation at its end, in the
    # callback that ended it: a request's own future (one step of the loop to its task; a
    # request cancelled cancels only its own), or a request answered without a task
    # (``run_now``: its answer written there)
    waiters: list[Waiter] = dataclasses.field(default_factory=list)
    where: tuple[str, str] = ("", "")
    started: float = 0.0


def _resolve(waiting: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if waiting.done():
        return
    if isinstance(error, Exception):
        waiting.set_exception(error)
    elif error is not None:
        waiting.cancel()
    else:
        waiting.set_result(value)


@dataclass(frozen=True, slots=True)
class Named:
    """A view the view process knows by its request: ``method`` with ``params``, computed
    by ``compute`` (the same function there and here, on the thread)."""

    method: str
    params: Wire
    compute: Callable[[Host, Any], Encoded]

    def __call__(self, host: Host) -> Encoded:
        return self.compute(host, self.params)


@dataclass(frozen=True, slots=True)
class _Sent:
    """A view asked of the view process, with the session's edits count it was asked at."""

    process: ViewProcess
    edits: int
    asked: Asked


@dataclass
class _Watch:
    """A keyed view a client asks for (an open ledger): what to compute again on a write."""

    view: Named
    asked: float


class ViewMutates(RuntimeError):
    """A read-only view tried to notify clients or lease a service."""


@dataclass
class ReadHost:
    """The daemon as a view sees it: the worker's connection, a copy of the hub's
    per-session state taken on the loop, the subscribers as they were. Nothing
    can be broadcast or leased from here."""

    home: Path
    db: apsw.Connection
    store: SessionStore
    hub: SessionHub
    _settings: Callable[[str | None], LoadedSettings]
    _subscribers: dict[str, list[Subscriber]]

    def settings(self, workspace: str | None = None) -> LoadedSettings:
        return self._settings(workspace)

    def pool(self, kind: str, close: Callable[[Any], None]) -> ServicePool[Any]:
        raise ViewMutates(f"a read-only view cannot lease the {kind} service")

    def broadcast(self, session_id: str, method: str, params: Wire) -> None:
        raise ViewMutates(f"a read-only view cannot send {method}")

    def broadcast_all(self, method: str, params: Wire) -> None:
        raise ViewMutates(f"a read-only view cannot send {method}")

    def subscribers(self, session_id: str) -> Sequence[Subscriber]:
        return self._subscribers.get(session_id, [])

    def clients(self) -> Sequence[Subscriber]:
        return [c for group in self._subscribers.values() for c in group]


def _retrieved(done: asyncio.Future[Any]) -> None:
    if not done.cancelled():
        done.exception()  # retrieved: its requests were told (a failure is not logged twice)


def _why_new(
    kept: _Kept | None, stamp: tuple[Any, ...], settings: LoadedSettings, now: float
) -> str:
    """Why a view is computed rather than served as kept (a request trace's mark)."""
    if kept is None:
        return "new:first"
    if kept.stamp[0] != stamp[0]:
        return "new:version"
    if kept.stamp != stamp or kept.settings is not settings:
        return "new:inputs"
    return "new:expired"


class ViewWorker:
    """One thread, one connection (opened there on first use), one snapshot per view."""

    def __init__(self, db_path: Path, use_process: bool | None = None) -> None:
        self.db_path = db_path
        # the view process (made on the first view that names its request), unless disabled
        self._use_process = view_process.enabled() if use_process is None else use_process
        # from the first view (tests, benches, BONSAI_VIEW_PROCESS=1), or once enough clients poll
        self._always = view_process.always() if use_process is None else use_process
        # the view processes (lanes) made so far, and the lane each session's views go to
        self.processes: list[ViewProcess] = []
        self._lanes: dict[str, int] = {}
        self._pool: ThreadPoolExecutor | None = None
        self._local = threading.local()
        self._memos: dict[str, AssemblyMemo] = {}  # the worker's own: memos are not thread-safe
        self._messages = MessageCache()  # the worker's too: a message read again is kept
        self._stable = StablePartsCache(FRESH_S)  # and the parts before the tail, as long
        self._kept: dict[tuple[str, str], _Kept] = {}
        # the view being computed, by (session, key), with the stamp it will be true for
        self._running: dict[tuple[str, str], _Running] = {}
        # keyed views asked lately, by session and key; the sessions written to since the
        # last refresh; the refresh scheduled; the daemon and the loop it runs on
        self._watched: dict[str, dict[str, _Watch]] = {}
        self._dirty: set[str] = set()
        self._refresh_at: asyncio.TimerHandle | None = None
        self._host: Host | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.eager = 0  # views computed ahead of a poll (tests and benches)

    async def run(
        self, host: Host, session_id: str | None, view: Callable[[Host], T], key: str | None = None
    ) -> T:
        """``view(read_host)`` on the worker; the hub state it needs is copied here, on the loop.
        ``session_id`` names the session whose clients the view sees (None: no session's).
        With a ``key``, a view still true is served as kept, without recomputing it.
        A :class:`Named` view is computed in the view process (on the thread when it
        cannot answer)."""
        if session_id is not None:
            await ensure_baseline(host, session_id)  # the one write a first assembly makes
        request_trace.mark("baseline")
        if key is None or session_id is None:
            return await self._compute(host, session_id, view)
        self._watch(host, session_id, key, view)
        value, running, new = self._join(host, session_id, key)
        if running is None:
            return cast(T, value)
        # the same view of the same log already computing: its answer is this one's too
        mine: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        running.waiters.append(functools.partial(_resolve, mine))
        if new:
            self._start(host, session_id, view, running)
        value = await mine
        request_trace.mark("back")
        return cast(T, value)

    def run_now(
        self, host: Host, session_id: str, view: Callable[[Host], Any], key: str, then: Waiter
    ) -> tuple[bool, Any]:
        """:meth:`run`'s answer without a task, for a request taken in its connection's
        read callback: ``(True, the kept answer)`` when it is still true; else
        ``(False, None)`` and ``then`` is called with the computed one by the callback
        that ends its computation (the view process's pipe, the thread's task). The
        caller has checked that :meth:`run` would not wait before its kept-answer check
        (the session's baseline is taken)."""
        request_trace.mark("baseline")
        self._watch(host, session_id, key, view)
        value, running, new = self._join(host, session_id, key)
        if running is None:
            return True, value
        running.waiters.append(then)
        if new:
            self._start(host, session_id, view, running)
        return False, None

    def _join(self, host: Host, session_id: str, key: str) -> tuple[Any, _Running | None, bool]:
        """The kept answer (``value, None, False``) when it is still true; else the
        computation to wait for (``None, running, new``): one already computing the same
        view of the same log, or a new one, started once its first waiter is added."""
        settings = host.settings(host.store.get(session_id).workspace)
        stamp = (
            versions.version(host.db, session_id),
            host.hub.repomap_text.get(session_id),
            tuple(sorted(c.id for c in host.subscribers(session_id))),
        )
        where = (session_id, key)
        kept = self._kept.get(where)
        now = time.monotonic()
        if (
            kept is not None
            and kept.stamp == stamp
            and kept.settings is settings
            and now - kept.at < FRESH_S
        ):
            request_trace.mark("kept")
            return kept.value, None, False
        running = self._running.get(where)
        if running is None or running.stamp != stamp or running.settings is not settings:
            # none, or one of a log that has moved since: this view starts its own
            request_trace.mark(_why_new(kept, stamp, settings, now))
            running = self._running[where] = _Running(stamp, settings, where=where, started=now)
            return None, running, True
        request_trace.mark("shared")
        return None, running, False

    def _start(
        self, host: Host, session_id: str, view: Callable[[Host], Any], running: _Running
    ) -> None:
        where, now = running.where, running.started
        if not self._ask_child(host, session_id, view, where, running, now, whole=False):
            self._on_thread(host, session_id, view, where, running, now)

    def _ask_child(
        self,
        host: Host,
        session_id: str,
        view: Callable[[Host], Any],
        where: tuple[str, str],
        running: _Running,
        started: float,
        whole: bool,
    ) -> bool:
        """Ask the view process for a :class:`Named` view now; its answer settles
        ``running`` from the pipe's own callback (no task wakes between the answer and
        the requests). False when it is not a named view or the process cannot take it.
        ``whole``: the child reads the whole log (a row changed while it computed)."""
        if not isinstance(view, Named):
            return False
        process = self._process_for(host, session_id)
        if process is None:
            return False
        edits = None if whole else versions.edits(host.db, session_id)
        context = contextvars.copy_context()  # the request's (its trace), for what follows

        def then(asked: Asked) -> None:
            answered = (process, asked, edits)
            context.run(
                self._child_answered, host, session_id, view, where, running, started, *answered
            )

        try:
            process.send(host, view.method, view.params, session_id, edits, then)
        except ViewProcessGone:
            return False
        return True

    def _child_answered(
        self,
        host: Host,
        session_id: str,
        view: Named,
        where: tuple[str, str],
        running: _Running,
        started: float,
        process: ViewProcess,
        asked: Asked,
        edits: int | None,
    ) -> None:
        try:
            if process not in self.processes:
                raise ViewProcessGone("the view process was closed")
            body = process.outcome(asked)
        except ViewProcessGone:
            request_trace.mark("process_gone")
            self._on_thread(host, session_id, view, where, running, started)
            return
        except Exception as error:  # the user's error (a node that does not exist)
            self._settle(where, running, started, error=error)
            return
        if edits is not None and versions.edits(host.db, session_id) != edits:
            # a row changed while the view computed: the whole log is read again
            request_trace.mark("edited")
            if not self._ask_child(host, session_id, view, where, running, started, whole=True):
                self._on_thread(host, session_id, view, where, running, started)
            return
        request_trace.mark("process_back")
        self._settle(where, running, started, value=Encoded(body))

    def _on_thread(
        self,
        host: Host,
        session_id: str,
        view: Callable[[Host], Any],
        where: tuple[str, str],
        running: _Running,
        started: float,
    ) -> None:
        """Compute ``running``'s view on the worker thread (and settle it there)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # the child was closed with the loop: nobody waits any more
            self._settle(where, running, started, error=ViewProcessGone("the daemon stopped"))
            return
        task = asyncio.ensure_future(self._keep(host, session_id, view, where, running, started))
        task.add_done_callback(_retrieved)

    async def _keep(
        self,
        host: Host,
        session_id: str,
        view: Callable[[Host], T],
        where: tuple[str, str],
        running: _Running,
        started: float,
    ) -> None:
        try:
            value = await self._compute(host, session_id, view, in_process=False)
        except BaseException as error:
            self._settle(where, running, started, error=error)
            raise
        self._settle(where, running, started, value=value)

    def _settle(
        self,
        where: tuple[str, str],
        running: _Running,
        started: float,
        value: Any = None,
        error: BaseException | None = None,
    ) -> None:
        """The computation of ``running`` ended: its answer kept (unless it failed, the
        session was forgotten meanwhile or a view of a newer log is computing) and handed
        to every request waiting for it."""
        if self._running.get(where) is running:
            del self._running[where]
            if error is None:
                self._kept[where] = _Kept(running.stamp, running.settings, started, value)
        for waiter in running.waiters:
            try:
                waiter(value, error)
            except Exception:  # one request's answer failing to go out: not the others'
                log.exception("answering a view's waiter failed")
        if where[0] in self._dirty:  # written to while it computed: computed again
            self._schedule()

    # ------------------------------------------------------------- eager views

    def _watch(self, host: Host, session_id: str, key: str, view: Callable[[Host], Any]) -> None:
        """Note a keyed view asked now: it is computed ahead while it is asked for."""
        if not isinstance(view, Named) or not self._use_process:
            return
        if self._host is None:
            try:
                versions.counters(host.db).listener = self._moved
            except RuntimeError:  # a connection without version counters: nothing to watch
                return
            self._host, self._loop = host, asyncio.get_running_loop()
        watches = self._watched.setdefault(session_id, {})
        watch = watches.get(key)
        if watch is None:
            watches[key] = _Watch(view, time.monotonic())
        else:  # a poll of an open ledger: the same view asked again
            watch.view, watch.asked = view, time.monotonic()

    def _moved(self, name: str) -> None:
        """A write moved counter ``name``; called inside the write (a trigger), so only
        noted here, and never raising: that would fail the write itself."""
        if not self._watched:
            return
        try:
            if name == versions.GLOBAL:
                self._dirty.update(self._watched)
            elif name in self._watched:
                self._dirty.add(name)
            else:
                return
            self._schedule()
        except Exception:  # the write goes on; its views are computed at the next poll
            log.exception("noting a write for the views computed ahead failed")

    def _schedule(self) -> None:
        if self._refresh_at is not None or self._loop is None:
            return
        try:
            if asyncio.get_running_loop() is not self._loop:
                return
        except RuntimeError:  # a write off the loop: the next one on it refreshes
            return
        # a context of its own: the refresh is no request's (its trace stays the request's)
        self._refresh_at = self._loop.call_later(
            EAGER_DELAY_S, self._refresh, context=contextvars.Context()
        )

    def _refresh(self) -> None:
        """Compute again each watched view of the sessions written to (each once)."""
        self._refresh_at = None
        dirty, self._dirty = self._dirty, set()
        now = time.monotonic()
        for session_id in dirty:
            keys = self._watched.get(session_id, {})
            for key, watch in list(keys.items()):
                if now - watch.asked > WATCH_S:  # no longer asked for: not computed ahead
                    del keys[key]
                else:
                    self._recompute(session_id, key, watch)
            if not keys:
                self._watched.pop(session_id, None)

    def _recompute(self, session_id: str, key: str, watch: _Watch) -> None:
        host = self._host
        lane = self._lanes.get(session_id)
        if host is None or lane is None or lane >= len(self.processes):
            return  # the thread serves this session's views: not computed ahead
        if not self.processes[lane].ready:
            return
        if host.db.in_transaction:  # a write not yet committed: again once it is
            self._dirty.add(session_id)
            self._schedule()
            return
        if (session_id, key) in self._running:  # may predate the write: again at its end
            self._dirty.add(session_id)  # (``_settle``)
            return
        try:
            _, running, new = self._join(host, session_id, key)
        except Exception as error:  # the session deleted meanwhile: its next poll says so
            log.debug("a view computed ahead failed to start: %s", error)
            self._watched.get(session_id, {}).pop(key, None)
            return
        if running is not None and new:
            self.eager += 1
            self._start(host, session_id, watch.view, running)

    async def call(self, read: Callable[[], T]) -> T:
        """``read()`` on the worker, for a read that brings its own state (the memory
        service, under its lock) rather than the log's snapshot."""
        return await asyncio.get_running_loop().run_in_executor(self._executor(), read)

    def warm(self, job: Callable[[], object]) -> None:
        """``job()`` on the worker, not waited for: a failure is logged, never raised."""

        def run() -> None:
            try:
                job()
            except Exception:
                log.warning("warming the view worker failed", exc_info=True)

        self._executor().submit(run)

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            sys.setswitchinterval(min(sys.getswitchinterval(), LOOP_GIL_WAIT_S))
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="bonsai-views")
        return self._pool

    async def _compute(
        self,
        host: Host,
        session_id: str | None,
        view: Callable[[Host], T],
        in_process: bool = True,
    ) -> T:
        if in_process and isinstance(view, Named) and session_id is not None:
            body = await self._in_process(
                host, session_id, view, self._send(host, session_id, view)
            )
            if body is not None:
                return cast(T, Encoded(body))
        # the hub as it is now; the worker's own memos (they are not thread-safe); the
        # counters and the server facts are shared (their caches take locks)
        hub = dataclasses.replace(
            host.hub,
            memos=self._memos,
            stable_parts=self._stable,
            repomap_text=dict(host.hub.repomap_text),
            client_settings=dict(host.hub.client_settings),
        )
        subscribers = {} if session_id is None else {session_id: list(host.subscribers(session_id))}
        loop = asyncio.get_running_loop()
        # the session's edits count, read on the writer's connection before the snapshot:
        # while it stands the worker reads only the rows appended to the log
        edits = {} if session_id is None else {session_id: versions.edits(host.db, session_id)}
        trace = request_trace.current()  # the executor does not carry the context over
        try:
            result = await loop.run_in_executor(
                self._executor(), self._snapshot, host, hub, subscribers, view, edits, trace
            )
            if session_id is not None and versions.edits(host.db, session_id) != edits[session_id]:
                # a row changed while the view computed: its snapshot may hold it, the
                # rows it kept do not; the whole log is read again
                request_trace.mark("edited")
                result = await loop.run_in_executor(
                    self._executor(), self._snapshot, host, hub, subscribers, view, {}, trace
                )
            request_trace.mark("thread_back")
            return result
        finally:
            if host.hub.embedder is None:  # loaded by this view (the tree's attachment rule)
                host.hub.embedder = hub.embedder

    def _send(self, host: Host, session_id: str, view: Callable[[Host], Any]) -> _Sent | None:
        """A :class:`Named` view asked of the view process now (not when a task gets to
        it); None when it is not a named view or the process cannot take it."""
        if not isinstance(view, Named):
            return None
        process = self._process_for(host, session_id)
        if process is None:
            return None
        edits = versions.edits(host.db, session_id)
        try:
            return _Sent(
                process, edits, process.send(host, view.method, view.params, session_id, edits)
            )
        except ViewProcessGone:
            return None

    async def _in_process(
        self, host: Host, session_id: str, view: Named, asked: _Sent | None
    ) -> bytes | None:
        """The view's bytes from the view process; None when it cannot answer (logged there)."""
        if asked is None:
            request_trace.mark("process_gone")
            return None
        process = asked.process
        try:
            body = await process.answer(asked.asked)
            if versions.edits(host.db, session_id) != asked.edits:
                # a row changed while the view computed: the whole log is read again
                request_trace.mark("edited")
                body = await process.ask(host, view.method, view.params, session_id, None)
        except ViewProcessGone:
            request_trace.mark("process_gone")
            return None
        request_trace.mark("process_back")
        return body

    def status(self) -> str:
        """Where views are computed, for ``bonsai status``."""
        if not self._use_process:
            return f"on the worker thread ({view_process.DISABLE_ENV}=0)"
        if not self.processes:
            if self._always:
                return "view process not started (it starts with the first ledger view)"
            return (
                "on the worker thread (a view process starts once "
                f"{view_process.AUTO_CLIENTS} clients are connected)"
            )
        answered = sum(p.answered for p in self.processes)
        states = "; ".join(p.status() for p in self.processes)
        name = "view process" if len(self.processes) == 1 else "view processes"
        return f"{name} {states}, {answered} answered"

    @property
    def process(self) -> ViewProcess | None:
        """The first view process (the one every session's views go to while there is one)."""
        return self.processes[0] if self.processes else None

    def _process_for(self, host: Host, session_id: str | None = None) -> ViewProcess | None:
        """The view process ``session_id``'s views go to: always the same one (its caches
        hold the session), the lane with the fewest sessions when it is new, made then
        (up to ``view_process.LANES``); None while the thread serves alone."""
        if not self._use_process:
            return None
        if not self.processes:
            if not self._always and len(host.clients()) < view_process.AUTO_CLIENTS:
                return None  # one or two clients: the thread, and no child to pay for
            self.processes.append(ViewProcess(host.home, self.db_path))
        if session_id is None:
            return self.processes[0]
        lane = self._lanes.get(session_id)
        if lane is None:
            counts = [0] * view_process.LANES
            for taken in self._lanes.values():
                counts[taken] += 1
            lane = self._lanes[session_id] = counts.index(min(counts))
        while len(self.processes) <= lane:  # a second session polled: its own lane
            self.processes.append(ViewProcess(host.home, self.db_path))
        return self.processes[lane]

    def _snapshot(
        self,
        host: Host,
        hub: SessionHub,
        subscribers: dict[str, list[Subscriber]],
        view: Callable[[Host], T],
        edits: dict[str, int],
        trace: request_trace.Trace | None = None,
    ) -> T:
        if trace is not None:
            trace.mark("thread_start")
        conn = self._connection()
        store = CachedStore(conn, self._messages, edits)
        read = ReadHost(host.home, conn, store, hub, host.settings, subscribers)
        with conn:  # one transaction: every read of this view sees the same log
            result = view(read)
        if trace is not None:
            trace.mark("thread_end")
        return result

    def _connection(self) -> apsw.Connection:
        conn: apsw.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            # read-only: a view that tried to write would fail here, not contend with the loop
            conn = apsw.Connection(str(self.db_path), flags=apsw.SQLITE_OPEN_READONLY)
            conn.setbusytimeout(BUSY_TIMEOUT_MS)
            conn.execute("PRAGMA foreign_keys = ON")
            self._local.conn = conn
        return conn

    def forget(self, session_id: str) -> None:
        for process in self.processes:
            process.forget(session_id)
        self._lanes.pop(session_id, None)
        self._watched.pop(session_id, None)
        self._dirty.discard(session_id)
        self._memos.pop(session_id, None)
        self._messages.forget(session_id)
        for kept in [k for k in self._kept if k[0] == session_id]:
            del self._kept[kept]
        for running in [k for k in self._running if k[0] == session_id]:
            del self._running[running]

    def close(self) -> None:
        if self._refresh_at is not None:
            self._refresh_at.cancel()
            self._refresh_at = None
        self._watched.clear()
        for process in self.processes:
            process.close()
        if self._pool is not None:
            self._pool.submit(self._close_connection).result(timeout=30)
            self._pool.shutdown(wait=True)
            self._pool = None

    def _close_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
