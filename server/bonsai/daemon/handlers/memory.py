"""bonsai/memory/*: the two-tier memory stores, through the memory service.

The reads (list, get, search) run on the view worker, under the service's lock;
the writes run on the loop, in arrival order.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from bonsai.daemon.rpc import Ctx, handles
from bonsai.errors import InvalidParams, NotFound
from bonsai.protocol import models as m
from bonsai.services.memory.entry import MemoryEntry
from bonsai.services.memory.service import MemoryService
from bonsai.services.memory.store import MemoryStoreError
from bonsai.session.memory import memory_read, memory_service

T = TypeVar("T")


def _info(entry: MemoryEntry) -> m.MemoryEntryInfo:
    return m.MemoryEntryInfo(
        name=entry.name,
        tier=entry.tier,
        type=entry.type,
        description=entry.description,
        path=str(entry.path),
        enabled=entry.enabled,
    )


async def _guard(call: Callable[[], Awaitable[T]]) -> T:
    try:
        return await call()
    except MemoryStoreError as error:
        text = str(error)
        raise (NotFound(text) if "no memory entry" in text else InvalidParams(text)) from None


def _read(ctx: Ctx, workspace: str | None, read: Callable[[MemoryService], T]) -> Awaitable[T]:
    return memory_read(ctx.daemon, workspace, read, ctx.daemon.views.call)


@handles("bonsai/memory/list", read_only=True)
async def list_(ctx: Ctx, params: m.MemoryScope) -> m.MemoryListResult:
    def read(service: MemoryService) -> m.MemoryListResult:
        status = service.status()
        return m.MemoryListResult(
            entries=[_info(e) for e in service.list()],
            issues=[f"{i.path}: {i.problem}" for i in status.issues],
            embeddings=status.embeddings,
            advisory=service.gitignore_advisory(),
        )

    return await _read(ctx, params.workspace, read)


@handles("bonsai/memory/get", read_only=True)
async def get(ctx: Ctx, params: m.MemoryNameParams) -> m.MemoryGetResult:
    def read(service: MemoryService) -> m.MemoryGetResult:
        entry = service.get(params.name)
        return m.MemoryGetResult(entry=_info(entry), body=entry.body)

    return await _guard(lambda: _read(ctx, params.workspace, read))


@handles("bonsai/memory/add", read_only=False)
async def add(ctx: Ctx, params: m.MemoryAddParams) -> m.MemoryEntryResult:
    async def run() -> m.MemoryEntryResult:
        service = memory_service(ctx.daemon, params.workspace)
        plan = service.add(params.fact, tier=params.tier, name=params.name)
        return m.MemoryEntryResult(entry=_info(service.get(plan.name)))

    return await _guard(run)


@handles("bonsai/memory/edit", read_only=False)
async def edit(ctx: Ctx, params: m.MemoryEditParams) -> m.MemoryEntryResult:
    async def run() -> m.MemoryEntryResult:
        service = memory_service(ctx.daemon, params.workspace)
        service.edit(params.name, fact=params.body, description=params.description)
        return m.MemoryEntryResult(entry=_info(service.get(params.name)))

    return await _guard(run)


@handles("bonsai/memory/forget", read_only=False)
async def forget(ctx: Ctx, params: m.MemoryNameParams) -> m.Empty:
    async def run() -> m.Empty:
        memory_service(ctx.daemon, params.workspace).forget(params.name)
        return m.Empty()

    return await _guard(run)


@handles("bonsai/memory/setEnabled", read_only=False)
async def set_enabled(ctx: Ctx, params: m.MemorySetEnabledParams) -> m.Empty:
    async def run() -> m.Empty:
        memory_service(ctx.daemon, params.workspace).set_enabled(params.name, params.enabled)
        return m.Empty()

    return await _guard(run)


@handles("bonsai/memory/search", read_only=True)
async def search(ctx: Ctx, params: m.MemorySearchParams) -> m.MemorySearchResult:
    def read(service: MemoryService) -> m.MemorySearchResult:
        result = service.search(params.query, params.limit)
        hits: list[Any] = [
            m.MemorySearchHit(
                name=hit.name,
                tier=hit.tier,
                score=hit.score,
                lanes=m.MemoryLanes(bm25=hit.lanes.bm25, embedding=hit.lanes.embedding),
            )
            for hit in result.results
        ]
        return m.MemorySearchResult(results=hits, embeddings=result.embeddings)

    return await _read(ctx, params.workspace, read)
