"""Store an imported recording as a bonsai session (daemon side, one transaction).

``store_imported`` runs wherever the database writer lives: inside the daemon
(exposed as ``bonsai/session/import``) or in the CLI when no daemon runs and it
holds the database lock itself. The session and all its messages land in one
transaction, or nothing does.
"""

from __future__ import annotations

from typing import Any

from bonsai.services.importers import ImportedSession
from bonsai.services.store.sessions import SessionStore

IMPORT_STATE_KEY = "import"


def import_info(imported: ImportedSession) -> dict[str, Any]:
    """What the session state remembers about where the messages came from."""
    return {
        "format": imported.format,
        "source": imported.source,
        "run": imported.run,
        "runs": imported.runs,
        "warnings": list(imported.warnings),
        "times": imported.times,  # the recording's timestamps (None: it had none)
    }


def store_imported(store: SessionStore, workspace: str, imported: ImportedSession) -> str:
    """Create a session holding ``imported``'s messages byte for byte; returns its id."""
    if not imported.messages:
        raise ValueError(f"{imported.source}: the recording has no messages to import")
    with store.conn:
        row = store.create(workspace, imported.title or None)
        store.append_many(row.session_id, imported.messages)
        store.set_state(row.session_id, IMPORT_STATE_KEY, import_info(imported))
    return row.session_id
