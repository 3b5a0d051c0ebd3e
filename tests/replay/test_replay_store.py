"""``store_imported``: the daemon-side import, all or nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError
from replay_helpers import write_recording

from bonsai.services.importers import ImportedSession, import_file
from bonsai.services.replay import store_imported, stored_source
from bonsai.services.store.db import open_database
from bonsai.services.store.sessions import SessionStore


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(open_database(tmp_path / "bonsai.db"))


def test_an_import_lands_whole_with_its_origin(store: SessionStore, tmp_path: Path) -> None:
    imported = import_file(write_recording(tmp_path))
    session_id = store_imported(store, str(tmp_path), imported)
    assert [s.message for s in store.messages(session_id)] == imported.messages
    assert store.get_state(session_id, "import")["format"] == "openai"
    source = stored_source(store.conn, session_id)
    assert (
        source.persona is not None
        and source.items[0].id == store.messages(session_id)[1].message_id
    )


def test_a_failing_import_leaves_nothing(store: SessionStore, tmp_path: Path) -> None:
    empty = ImportedSession(format="openai", title="t", messages=[], runs=1, source="x.json")
    with pytest.raises(ValueError, match="no messages"):
        store_imported(store, str(tmp_path), empty)
    imported = import_file(write_recording(tmp_path))
    broken = imported.model_copy(update={"messages": [*imported.messages, "not a message"]})
    with pytest.raises(ValidationError):  # fails after the session row and 25 messages
        store_imported(store, str(tmp_path), broken)
    assert store.count() == 0
