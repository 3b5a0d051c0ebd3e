"""Forking a session: a new session whose log is a copy of one path of another.

Branching copies, not shares: the copy gets its own message rows, its own
context state for them (pins, stubs, the rolling summary) and its own copies
of the spilled raw tool outputs its messages refer to, so ``read_tool_output``
handles resolve in the copy and changing or deleting either session never
touches the other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bonsai.core.context.context_state import ContextState, copied_state
from bonsai.domain import StoredMessage
from bonsai.services.store.sessions import SessionRow, SessionStore
from bonsai.services.store.turns import ToolOutputStore

STATE_KEY = "context"


@dataclass(frozen=True)
class Forked:
    session: SessionRow
    messages: int
    tool_outputs: int


def fork_session(
    store: SessionStore,
    source: SessionRow,
    path: list[StoredMessage],
    state: ContextState,
    title: str | None = None,
) -> Forked:
    """Copy ``path`` (root → node, in order) and what belongs to it into a new session.
    ``state`` is the source's whole context state."""
    target = store.create(source.workspace, title or f"{source.title} (fork)")
    copies = store.append_many(target.session_id, [s.message for s in path])
    ids = {old.message_id: new.message_id for old, new in zip(path, copies, strict=True)}
    seqs = {new.message_id: new.seq for new in copies}
    new_state = copied_state(state, ids, seqs, _reseq(path, copies))
    store.set_state(target.session_id, STATE_KEY, new_state.model_dump(mode="json"))
    calls = [call.id for s in path for call in s.message.tool_calls]
    outputs = ToolOutputStore(store.conn).copy(source.session_id, target.session_id, calls)
    return Forked(store.get(target.session_id), len(copies), outputs)


def _reseq(path: list[StoredMessage], copies: list[StoredMessage]) -> Callable[[int], int]:
    """A source log position (``r``: before the first message with seq ≥ r) in the
    copy's numbering: before the same copied message, or after the last one."""
    pairs = [(old.seq, new.seq) for old, new in zip(path, copies, strict=True)]

    def reseq(position: int) -> int:
        for old_seq, new_seq in pairs:
            if old_seq >= position:
                return new_seq
        return (pairs[-1][1] + 1) if pairs else position

    return reseq
