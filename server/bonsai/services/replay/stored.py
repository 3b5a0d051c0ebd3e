"""Replay sources from stored sessions and from files."""

from __future__ import annotations

from pathlib import Path

import apsw

from bonsai.services.importers import ImportedSession, import_file
from bonsai.services.replay.source import ReplaySource, source_from_messages
from bonsai.services.replay.store_import import IMPORT_STATE_KEY
from bonsai.services.store.sessions import SessionStore


def stored_source(conn: apsw.Connection, session_id: str) -> ReplaySource:
    """A stored session as a replay source (raises ``UnknownSession``)."""
    store = SessionStore(conn)
    row = store.get(session_id)
    stored = store.messages(session_id)
    info = store.get_state(session_id, IMPORT_STATE_KEY)
    times: list[float | None] | None = [s.created_at for s in stored]
    if info is not None:  # imported: the recording's own times, when it had them
        recorded = info.get("times") if isinstance(info, dict) else None
        ok = isinstance(recorded, list) and len(recorded) == len(stored)
        times = [float(t) for t in recorded] if ok else None  # type: ignore[union-attr]
    return source_from_messages(
        [s.message for s in stored],
        [s.message_id for s in stored],
        title=row.title,
        session_id=session_id,
        recorded=info is not None,
        times=times,
    )


def imported_source(imported: ImportedSession) -> ReplaySource:
    """An imported recording as a replay source, with its timestamps when it has them."""
    return source_from_messages(imported.messages, title=imported.title, times=imported.times)


def file_source(
    path: Path, fmt: str = "auto", run: int = 0
) -> tuple[ReplaySource, ImportedSession]:
    """A recording file as a replay source (raises ``ImportFormatError``)."""
    imported = import_file(path, fmt, run)
    return imported_source(imported), imported
