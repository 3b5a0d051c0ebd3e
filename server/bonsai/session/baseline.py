"""A session's git baseline, in place before a read-only view needs it.

The first request assembled in a session takes the workspace's git baseline and
stores it (``ContextBridge.baseline``). A view runs over a read-only snapshot and
cannot store anything, so before one runs the daemon takes the baseline (git is
read off the loop) and stores it on the loop, where every write happens.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from bonsai.agent.context_bridge import BASELINE_KEY
from bonsai.services.project_context import take_baseline
from bonsai.session.host import Host


def has_baseline(host: Host, session_id: str) -> bool:
    """Whether :func:`ensure_baseline` would return at once (the baseline is taken)."""
    return host.store.has_state(session_id, BASELINE_KEY)


async def ensure_baseline(host: Host, session_id: str) -> None:
    if has_baseline(host, session_id):
        return
    workspace = Path(host.store.get(session_id).workspace)
    baseline = await asyncio.to_thread(take_baseline, workspace)
    if not host.store.has_state(session_id, BASELINE_KEY):  # no turn stored one meanwhile
        host.store.set_state(session_id, BASELINE_KEY, baseline.model_dump(mode="json"))
