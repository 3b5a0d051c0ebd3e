"""After each request: what the pipeline did, to the turn's record and the clients."""

from __future__ import annotations

from bonsai.session.base import notify_ctx
from bonsai.session.compaction import ctx_events
from bonsai.session.steps.base import Built, TurnScope, TurnStep


class CtxNotice(TurnStep):
    """Records the assembly's context events on the turn and sends
    ``bonsai/ctx/changed`` (the newest assembly is kept for ``config/get``)."""

    def __init__(self, scope: TurnScope) -> None:
        self.scope = scope

    def after_request(self, built: Built) -> None:
        scope = self.scope
        done = ctx_events(built.assembly.records)
        scope.events.extend(e.model_dump(by_alias=True, exclude_none=True) for e in done)
        notify_ctx(scope.host, scope.session_id, built.assembly, done)
