"""bonsai/daemon/*"""

from __future__ import annotations

import asyncio
import os

from bonsai import __version__
from bonsai.daemon.loaded import heavy_modules
from bonsai.daemon.rpc import Ctx, handles
from bonsai.protocol import models as m
from bonsai.services.tokens.offline_tiktoken import loaded_encodings
from bonsai.session import provider_choice


@handles("bonsai/daemon/status", read_only=True)
async def status(ctx: Ctx, _: m.Empty) -> m.DaemonStatusResult:
    daemon = ctx.daemon
    return m.DaemonStatusResult(
        version=__version__,
        pid=daemon.pid,
        uptime_s=round(daemon.uptime(), 3),
        clients=len(daemon.connections),
        sessions=daemon.store.count(),
        db_path=str(daemon.db_path),
        provider=provider_choice.choice(daemon, daemon.settings().settings, None, None, os.environ),
        session_providers=provider_choice.status_entries(daemon, os.environ),
        views=daemon.views.status(),
        heavy_modules=heavy_modules(),
        tokenizers_loaded=[f"tiktoken:{name}" for name in loaded_encodings()],
    )


@handles("bonsai/daemon/stop", read_only=False)
async def stop(ctx: Ctx, _: m.Empty) -> m.Empty:
    # answer first, then stop: the reply must reach the client
    asyncio.get_running_loop().call_later(0.05, ctx.daemon.stop_requested.set)
    return m.Empty()
