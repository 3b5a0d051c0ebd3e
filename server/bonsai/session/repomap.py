"""The repository map per workspace: built off the event loop (one build per workspace
even when requests race), kept current by watchdog, pooled and released when idle."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from lsprotocol import types as lsp

from bonsai.domain import StoredMessage
from bonsai.services.providers.registry import lookup_model
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
    daemon: Host, workspace: str, clients: Sequence[Subscriber] | None = None
) -> AsyncIterator[RepoMapService]:
    """The workspace's repository map, built on first use (concurrent first requests
    share one build) and never released while the block runs."""
    workspace = workspace_key(workspace)
    pool: ServicePool[RepoMapService] = daemon.pool("repomap", _close)
    async with pool.lease(workspace, lambda: _build(daemon, workspace, clients or [])) as service:
        yield service


async def _build(daemon: Host, workspace: str, clients: Sequence[Subscriber]) -> RepoMapService:
    settings = daemon.settings(workspace).settings.repomap
    cache = daemon.home / "cache" / "repomap.db"
    cache.parent.mkdir(parents=True, exist_ok=True)
    service = RepoMapService(Path(workspace), cache, settings, _counter(daemon, workspace))
    try:
        progress = BuildProgress(clients, f"bonsai: mapping {Path(workspace).name}")
        await progress.begin()
        stats = await asyncio.to_thread(service.build, progress.report)
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


async def map_for(
    daemon: Host, workspace: str, history: list[StoredMessage], clients: Sequence[Subscriber]
) -> RepoMap:
    files, recent = conversation_files(history)
    users = [s.message.content for s in history if s.message.role == "user"]
    mentions = users[-1] if users else ""
    async with repomap_lease(daemon, workspace, clients) as service:
        return await asyncio.to_thread(service.get, None, files, mentions, recent)
