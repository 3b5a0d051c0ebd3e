"""A turn's history: the window after the durable summary boundary, when it holds.

``HistoryKeeper.view`` turns whatever history a caller has (the whole log, or a
window read at the start of the turn) into a consistent triple: the messages,
the active path's items, and the context state that goes with them. On the
whole log it sets the boundary (``bonsai.core.context.boundary``) and moves the
state entries before it to the cold key; on a window it moves the boundary
forward as more is folded. A tree operation since the boundary was set, or a
user action that unfolded its root, makes it fall back to the whole log (and
set the boundary again from there).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bonsai.core.context import ContextState, Item
from bonsai.core.context.boundary import window_start
from bonsai.core.context.context_state import (
    ColdState,
    HistoryBoundary,
    merge_cold,
    split_state,
    whole_state,
)
from bonsai.core.history.tree import derive
from bonsai.domain import StoredMessage
from bonsai.services.store.history import HistoryWindow, ops_mark, read_window
from bonsai.services.store.sessions import SessionStore
from bonsai.services.store.tree import TreeStore

STATE_KEY = "context"
COLD_KEY = "context_cold"

ToItems = Callable[[list[StoredMessage]], list[Item]]
Active = Callable[[list[StoredMessage]], list[StoredMessage]]
Count = Callable[[StoredMessage], int]


@dataclass(frozen=True)
class View:
    history: list[StoredMessage]
    items: list[Item]
    state: ContextState


@dataclass
class HistoryKeeper:
    store: SessionStore
    session_id: str
    to_items: ToItems
    active: Active
    count: Count

    # ------------------------------------------------------------ storage
    def state(self) -> ContextState:
        raw = self.store.get_state(self.session_id, STATE_KEY)
        return ContextState() if raw is None else ContextState.model_validate(raw)

    def cold(self) -> ColdState:
        raw = self.store.get_state(self.session_id, COLD_KEY)
        return ColdState() if raw is None else ColdState.model_validate(raw)

    def save(self, state: ContextState, cold: ColdState | None = None) -> None:
        """Persist the per-turn state; a state without boundary is whole (no cold part).
        One transaction: a crash never leaves a boundary without the entries it moved."""
        with self.store.conn:
            self.store.set_state(self.session_id, STATE_KEY, state.model_dump(mode="json"))
            if cold is not None:
                self.store.set_state(self.session_id, COLD_KEY, cold.model_dump(mode="json"))
            elif state.boundary is None:
                self.store.delete_state(self.session_id, COLD_KEY)

    # ------------------------------------------------------------ reading
    def read(self) -> list[StoredMessage]:
        """What a turn reads: the window when the boundary holds, else the whole log."""
        boundary = self.state().boundary
        if boundary is not None:
            window = read_window(self.store, self.session_id, boundary)
            if window is not None:
                return window
        return self.store.messages(self.session_id)

    def whole(self, history: list[StoredMessage]) -> View:
        """The whole active path with the whole state (the ledger, user actions)."""
        if isinstance(history, HistoryWindow):
            history = self.store.messages(self.session_id)
        hot = self.state()
        state = whole_state(hot, self.cold()) if hot.boundary is not None else hot
        return View(history, self.to_items(self.active(history)), state)

    def view(self, history: list[StoredMessage]) -> View:
        """The window view for a model call (see the module docstring)."""
        hot = self.state()
        window = self._window(history, hot)
        if window is None:
            return self._from_whole(history, hot)
        return self._advanced(window, hot)

    # ------------------------------------------------------------ windows
    def _holds(self, boundary: HistoryBoundary, state: ContextState) -> bool:
        return (
            boundary.episode is not None  # older boundaries are set again from the whole log
            and boundary.root_id in state.folded()
            and ops_mark(self.store.conn, self.session_id) == boundary.ops_mark
        )

    def _window(self, history: list[StoredMessage], hot: ContextState) -> HistoryWindow | None:
        boundary = hot.boundary
        if boundary is None or not self._holds(boundary, hot):
            return None
        if isinstance(history, HistoryWindow):
            old = history.boundary
            if old.root_id == boundary.root_id and old.start_seq <= boundary.start_seq:
                return history.narrowed(boundary)
            return None
        root = next((s for s in history if s.message_id == boundary.root_id), None)
        if root is None:
            return None
        return HistoryWindow([root, *(s for s in history if s.seq >= boundary.start_seq)], boundary)

    def window_items(self, window: HistoryWindow) -> list[Item]:
        """The window's path as items; turns continue from the folded prefix."""
        items = self.to_items(self.active(window))
        if not items:
            return items
        shift = window.boundary.users_before - (1 if items[0].message.role == "user" else 0)
        if shift == 0:
            return items
        return [items[0], *(i.model_copy(update={"turn": i.turn + shift}) for i in items[1:])]

    def _from_whole(self, history: list[StoredMessage], hot: ContextState) -> View:
        """Fall back to the whole log; set the boundary again when one is possible."""
        whole = self.whole(history)
        found = window_start(whole.items, whole.state)
        if found is None:
            if hot.boundary is not None:
                self.save(whole.state)  # the boundary no longer holds: the state is whole again
            return whole
        index = found.index
        items = whole.items
        by_id = {s.message_id: s for s in whole.history}
        start = items[index].seq
        boundary = HistoryBoundary(
            start_seq=start,
            root_id=items[0].id,
            users_before=found.users_before,
            episodes_before=found.episode.number - 1,
            ops_mark=ops_mark(self.store.conn, self.session_id),
            tokens_before=sum(self.count(by_id[i.id]) for i in items[:index]),
            episode=found.episode,
        )
        window = HistoryWindow(
            [by_id[items[0].id], *(s for s in whole.history if s.seq >= start)], boundary
        )
        if not self._same_path(window, [items[0], *items[index:]]):
            return whole  # a branch or a moved node would change what the window derives
        cold_ids = frozenset(s.message_id for s in whole.history if s.seq < start)
        hot_state, cold = split_state(whole.state, boundary, cold_ids)
        self.save(hot_state, cold)
        return View(window, self.window_items(window), hot_state)

    def _advanced(self, window: HistoryWindow, hot: ContextState) -> View:
        """The window view, with the boundary moved forward when more is folded."""
        items = self.window_items(window)
        found = window_start(items, hot)
        if found is None:
            return View(window, items, hot)
        index = found.index
        old = window.boundary
        by_id = {s.message_id: s for s in window}
        boundary = old.model_copy(
            update={
                "start_seq": items[index].seq,
                "users_before": found.users_before,
                "episodes_before": found.episode.number - 1,
                "tokens_before": old.tokens_before
                + sum(self.count(by_id[i.id]) for i in items[1:index]),
                "episode": found.episode,
            }
        )
        narrowed = window.narrowed(boundary)
        if not self._same_path(narrowed, [items[0], *items[index:]]):
            return View(window, items, hot)
        cold_ids = frozenset(s.message_id for s in window[1:] if s.seq < boundary.start_seq)
        retired = frozenset({old.episode.start}) if old.episode is not None else frozenset()
        hot_state, more = split_state(hot, boundary, cold_ids, retired)
        self.save(hot_state, merge_cold(self.cold(), more))
        return View(narrowed, self.window_items(narrowed), hot_state)

    def _same_path(self, window: HistoryWindow, expected: list[Item]) -> bool:
        """Does the window alone derive exactly this path?"""
        tree_store = TreeStore(self.store.conn)
        unsent = {s.message_id for s in window if s.message.status != "complete"}
        cancelled = tree_store.cancelled(self.session_id, window.boundary.start_seq)
        path = derive(window, [], cancelled | unsent).active_path()
        return path == [i.id for i in expected]
