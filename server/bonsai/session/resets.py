"""Hard resets (``/clear``, ``/start``, ``/review``): close the open task episode.

A reset is recorded as a seq in the session's context state
(``EpisodeState.resets``): the seq the next appended message will get. The
segmenter closes the open episode before the first message at or after it,
unconditionally (no ``new_topic`` needed), on every later read, the history
window's included, so the reset survives a restart and replays identically.
The closed episode is then like any closed one: archived to its card when
pressure comes and the rewrite economics clear, never at once.

A reset while a turn runs is refused (the turn saves the state at its end and
would race the reset); a reset on an episode without real work, or right after
another reset, changes nothing and says so.
"""

from __future__ import annotations

from bonsai.core.context.episodes_stage import with_reset
from bonsai.core.history.episodes import Episode
from bonsai.errors import Conflict
from bonsai.protocol import models as m
from bonsai.services.store.turns import TurnStore
from bonsai.session.base import bridge_for, notify_ctx, runtime
from bonsai.session.episodes import current_assembly, require_on, session_spans
from bonsai.session.host import Host

RUNNING = "a turn is running in this session; wait for it or cancel it first, then reset"


def reset(daemon: Host, session_id: str, kind: m.ResetKind) -> m.SessionResetResult:
    """Record a hard reset at the current end of the log; tell attached clients."""
    require_on(daemon, session_id)  # also: unknown session
    if runtime(daemon, session_id).running is not None:
        raise Conflict(RUNNING)
    latest = daemon.store.latest(session_id)
    at = latest[-1].seq + 1 if latest else 1
    bridge = bridge_for(daemon, session_id)
    spans = session_spans(daemon, session_id)
    current = spans[-1] if spans else None
    why = _unchanged(current)
    if why is not None or current is None:
        return m.SessionResetResult(kind=kind, message=f"nothing to reset: {why}")
    bridge.save_state(with_reset(bridge.state(), at))
    title = current.title or f"episode {current.number}"
    message = (
        f'closed episode #{current.number} "{title}"; '
        "it is archived to its card when the context needs the room"
    )
    detail = f"/{kind}: {message}"
    daemon.store.record_action(session_id, f"ep:{current.number}", "reset", detail)
    event = m.CtxEvent(kind="reset", detail=detail).model_dump(by_alias=True, exclude_none=True)
    TurnStore(daemon.db).add_events(session_id, [event])
    notify_ctx(daemon, session_id, current_assembly(daemon, session_id))
    return m.SessionResetResult(episode=current.number, kind=kind, message=message)


def _unchanged(current: Episode | None) -> str | None:
    """Why a reset would change nothing (``None``: it closes the open episode)."""
    if current is None:
        return "the session has no messages yet; nothing to close"
    if current.closed:
        return f"episode #{current.number} is already closed by a reset; nothing new since"
    if current.work == 0:
        return (
            f"episode #{current.number} has done no real work yet (no tool call besides "
            "titles and plans); nothing to close"
        )
    return None
