"""The repository map per workspace: built off the event loop, kept current by watchdog."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bonsai.daemon.state import Daemon
from bonsai.domain import StoredMessage
from bonsai.services.repomap.models import RepoMap
from bonsai.services.repomap.service import RepoMapService


def _counter(daemon: Daemon, workspace: str):  # type: ignore[no-untyped-def]
    from bonsai.daemon.chat import counter_for
    from bonsai.services.providers.registry import lookup_model

    providers = daemon.settings(workspace).settings.providers
    row = lookup_model(providers.model, providers.models)
    counter = counter_for(daemon, providers.model, row.info)
    return lambda text: counter.count_text(text).tokens


async def repomap_service(daemon: Daemon, workspace: str) -> RepoMapService:
    services: dict[str, RepoMapService] = daemon.services.setdefault("repomaps", {})
    service = services.get(workspace)
    if service is None:
        settings = daemon.settings(workspace).settings.repomap
        cache = daemon.home / "cache" / "repomap.db"
        cache.parent.mkdir(parents=True, exist_ok=True)
        service = RepoMapService(Path(workspace), cache, settings, _counter(daemon, workspace))
        await asyncio.to_thread(service.build)
        service.start_watching()
        services[workspace] = service
        daemon.services.setdefault("shutdown_hooks", []).append(_stopper(service))
    return service


def _stopper(service: RepoMapService):  # type: ignore[no-untyped-def]
    async def stop() -> None:
        service.stop()

    return stop


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


async def map_for(daemon: Daemon, workspace: str, history: list[StoredMessage]) -> RepoMap:
    service = await repomap_service(daemon, workspace)
    files, recent = conversation_files(history)
    users = [s.message.content for s in history if s.message.role == "user"]
    mentions = users[-1] if users else ""
    return await asyncio.to_thread(service.get, None, files, mentions, recent)
