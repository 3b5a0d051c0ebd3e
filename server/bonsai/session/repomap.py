"""The repository map per workspace: built off the event loop (one build per workspace
even when requests race), kept current by watchdog, pooled and released when idle.
A turn that starts a cold build of a large workspace gets the build's first map
(the files that matter most, ``first_map.py``) while the rest parses; the build
then completes in the background and later turns get the whole map."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Sequence
from pathlib import Path

from lsprotocol import types as lsp

from bonsai.domain import StoredMessage
from bonsai.services.providers.registry import lookup_model
from bonsai.services.repomap.first_map import FirstRequest
from bonsai.services.repomap.records import RepoMap
from bonsai.services.repomap.service import RepoMapService
from bonsai.services.workspace import workspace_key
from bonsai.session.base import counter_for
from bonsai.session.host import Host, Subscriber
from bonsai.session.service_pool import ServicePool

log = logging.getLogger("bonsai.repomap")


def _counter(daemon: Host, workspace: str):  # type: ignore[no-untyped-def]
    providers = daemon.settings(workspace).settings.providers
    row = lookup_model(providers.model, providers.models)
    counter = counter_for(daemon, providers, row.info)
    return lambda text: counter.count_text(text).tokens


class BuildProgress:
    """Reports a repo-map build to clients as LSP work-done progress ($/progress)."""

    def __init__(self, clients: Sequence[Subscriber], title: str) -> None:
        self.clients = clients
        self.title = title
        self.token = f"bonsai-repomap-{uuid.uuid4().hex[:8]}"
        self.loop = asyncio.get_running_loop()
        self.last = -1

    async def begin(self) -> None:
        live = []
        for client in self.clients:
            try:
                params = lsp.WorkDoneProgressCreateParams(token=self.token)
                await client.request_lsp(lsp.WINDOW_WORK_DONE_PROGRESS_CREATE, params, 5.0)
                live.append(client)
            except Exception:  # a client without progress support still gets the map
                continue
        self.clients = live
        self._send({"kind": "begin", "title": self.title, "percentage": 0, "cancellable": False})

    def report(self, done: int, total: int, message: str) -> None:
        percent = int(100 * done / total) if total else 100
        if percent >= self.last + 5 or done == total:  # at most ~20 reports per build
            self.last = percent
            value = {"kind": "report", "message": message, "percentage": percent}
            self.loop.call_soon_threadsafe(self._send, value)

    def end(self, message: str) -> None:
        self._send({"kind": "end", "message": message})

    def _send(self, value: dict[str, object]) -> None:
        for client in self.clients:
            client.notify_lsp(lsp.PROGRESS, lsp.ProgressParams(token=self.token, value=value))


@contextlib.asynccontextmanager
async def repomap_lease(
    daemon: Host,
    workspace: str,
    clients: Sequence[Subscriber] | None = None,
    first: FirstRequest | None = None,
) -> AsyncIterator[RepoMapService]:
    """The workspace's repository map, built on first use (concurrent first requests
    share one build) and never released while the block runs. ``first``: the
    first map of the files that matter most, if this request starts a cold build."""
    workspace = workspace_key(workspace)
    pool: ServicePool[RepoMapService] = daemon.pool("repomap", _close)

    def builder() -> Awaitable[RepoMapService]:
        return _build(daemon, workspace, clients or [], first)

    async with pool.lease(workspace, builder) as service:
        yield service


async def _build(
    daemon: Host, workspace: str, clients: Sequence[Subscriber], first: FirstRequest | None = None
) -> RepoMapService:
    settings = daemon.settings(workspace).settings.repomap
    cache = daemon.home / "cache" / "repomap.db"
    cache.parent.mkdir(parents=True, exist_ok=True)
    service = RepoMapService(Path(workspace), cache, settings, _counter(daemon, workspace))
    try:
        progress = BuildProgress(clients, f"bonsai: mapping {Path(workspace).name}")
        await progress.begin()
        stats = await asyncio.to_thread(service.build, progress.report, first)
        progress.end(f"{stats.files} files mapped, {stats.parsed} parsed")
        service.start_watching()
    except BaseException:
        await asyncio.to_thread(service.stop)
        raise
    log.info("repository map of %s: %s files, %s parsed", workspace, stats.files, stats.parsed)
    return service


def _close(service: RepoMapService) -> None:
    """Stop the watcher (joins its threads) and close the tag cache."""
    service.stop()


def conversation_files(history: list[StoredMessage]) -> tuple[list[str], list[str]]:
    """Files in the conversation (read or edited) and the most recent ones."""
    seen: list[str] = []
    for stored in history:
        evidence = stored.message.evidence
        if evidence is not None and evidence.path and evidence.kind in ("read", "edit", "write"):
            if evidence.path in seen:
                seen.remove(evidence.path)
            seen.append(evidence.path)
    return seen, seen[-5:]


_completing: set[asyncio.Task[RepoMap]] = set()  # builds that gave a first map, finishing


async def map_for(
    daemon: Host, workspace: str, history: list[StoredMessage], clients: Sequence[Subscriber]
) -> RepoMap:
    """This turn's map; the first map of a cold build when it comes before the
    whole map (the build goes on, and the next turn gets the whole map)."""
    files, recent = conversation_files(history)
    users = [s.message.content for s in history if s.message.role == "user"]
    mentions = users[-1] if users else ""
    loop = asyncio.get_running_loop()
    early: asyncio.Future[RepoMap] = loop.create_future()

    def on_first(first_map: RepoMap) -> None:  # on the building thread
        loop.call_soon_threadsafe(_settle, early, first_map)

    async def whole() -> RepoMap:
        first = FirstRequest(on_first, files, mentions)
        async with repomap_lease(daemon, workspace, clients, first) as service:
            return await asyncio.to_thread(service.get, None, files, mentions, recent)

    full = asyncio.ensure_future(whole())
    try:
        await asyncio.wait({early, full}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:  # the turn was cancelled: so is its map
        full.cancel()
        raise
    if full.done() or not early.done():
        early.cancel()
        return await full
    _completing.add(full)
    full.add_done_callback(_completed)
    log.info("repository map of %s: first map of %s files", workspace, len(early.result().files))
    return early.result()


def _settle(future: asyncio.Future[RepoMap], value: RepoMap) -> None:
    if not future.done():
        future.set_result(value)


def _completed(task: asyncio.Task[RepoMap]) -> None:
    _completing.discard(task)
    if not task.cancelled() and task.exception() is not None:
        log.error("repository map build failed after its first map", exc_info=task.exception())
