"""bonsai/repomap/get"""

from __future__ import annotations

import asyncio

from bonsai.daemon.rpc import Ctx, handles
from bonsai.errors import InvalidParams
from bonsai.protocol import models as m
from bonsai.session.repomap import repomap_lease


@handles("bonsai/repomap/get", read_only=False)
async def get(ctx: Ctx, params: m.RepomapGetParams) -> m.RepomapGetResult:
    workspace = params.workspace
    if params.session_id:
        workspace = ctx.daemon.store.get(params.session_id).workspace
    if not workspace:
        raise InvalidParams("give a sessionId or a workspace")
    try:
        async with repomap_lease(ctx.daemon, workspace, [ctx.connection]) as service:
            mentions = params.mentions or ""
            result = await asyncio.to_thread(service.get, params.tokens, (), mentions, ())
    except NotADirectoryError as error:
        raise InvalidParams(str(error)) from None
    files = [
        m.RepomapFile(path=f.path, rank=f.rank, tags=[t.signature for t in f.tags])
        for f in result.files
    ]
    return m.RepomapGetResult(
        text=result.text,
        files=files,
        tokens=result.tokens,
        built_ms=result.built_ms,
        cached=result.cached,
    )
