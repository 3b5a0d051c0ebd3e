"""The repository map each request shows (``repomap.enabled``, never in smol mode)."""

from __future__ import annotations

import logging

from bonsai.core.context.presets import effective_context
from bonsai.domain import StoredMessage
from bonsai.session.repomap import map_for
from bonsai.session.steps.base import TurnScope, TurnStep

log = logging.getLogger("bonsai.chat")


class RepositoryMap(TurnStep):
    """Before each request: render the map for this conversation and hand it to
    the bridge; the ledger shows the same text (kept in the hub)."""

    def __init__(self, scope: TurnScope) -> None:
        self.scope = scope

    async def before_request(self, history: list[StoredMessage], turn: int) -> None:
        scope, bridge = self.scope, self.scope.bridge
        bridge.repomap_text = await self._text(history)
        scope.host.hub.repomap_text[scope.session_id] = bridge.repomap_text

    async def _text(self, history: list[StoredMessage]) -> str | None:
        scope = self.scope
        settings = scope.settings
        if not settings.repomap.enabled or effective_context(settings.context).smol:
            return None
        clients = scope.host.subscribers(scope.session_id)
        try:
            repomap = await map_for(scope.host, scope.workspace, history, clients)
        except Exception:  # the map is an aid: a broken one must never break a turn
            log.exception("repository map failed; this request goes without it")
            return None
        return repomap.text or None
