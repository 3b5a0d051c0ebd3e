"""Moving state entries behind the boundary is all or nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from history_helpers import open_store

from bonsai.agent.history import COLD_KEY, STATE_KEY, HistoryKeeper
from bonsai.core.context import ContextState
from bonsai.core.context.context_state import ColdState, HistoryBoundary
from bonsai.services.store.sessions import SessionStore


class FailingColdWrite(SessionStore):
    """The real store, whose disk 'fills up' exactly when the cold part is written."""

    def set_state(self, session_id: str, key: str, value: Any) -> None:
        if key == COLD_KEY:
            raise OSError("disk full")
        super().set_state(session_id, key, value)


def test_a_failed_cold_write_leaves_the_old_state_whole(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    sid = store.create(str(tmp_path)).session_id
    before = ContextState(pins=["m_old"], stubs={})
    store.set_state(sid, STATE_KEY, before.model_dump(mode="json"))

    failing = FailingColdWrite(store.conn)
    keeper = HistoryKeeper(failing, sid, lambda h: [], lambda h: h, lambda s: 0)
    boundary = HistoryBoundary(
        start_seq=40, root_id="m_root", users_before=3, episodes_before=0, ops_mark=0
    )
    with pytest.raises(OSError, match="disk full"):
        keeper.save(ContextState(boundary=boundary), ColdState(pins=["m_old"]))

    # the pin moved to the cold part is not lost: the old state is still the state
    assert store.get_state(sid, STATE_KEY) == before.model_dump(mode="json")
    assert store.get_state(sid, COLD_KEY) is None
