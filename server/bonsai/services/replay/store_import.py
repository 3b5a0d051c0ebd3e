"""Store an imported recording as a bonsai session (daemon side, one transaction).

``store_imported`` runs wherever the database writer lives: inside the daemon
(exposed as ``bonsai/session/import``) or in the CLI when no daemon runs and it
holds the database lock itself. The session and all its messages land in one
transaction, or nothing does. A recording holds someone's tool outputs, keys
and all: every message's text and tool arguments are redacted before they are
stored, as on every live path.
"""

from __future__ import annotations

from typing import Any

from bonsai.domain import Message
from bonsai.services.importers import ImportedSession
from bonsai.services.redaction import redact
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
    """Create a session holding ``imported``'s messages (secrets redacted, the rest
    byte for byte); returns its id."""
    if not imported.messages:
        raise ValueError(f"{imported.source}: the recording has no messages to import")
    # anything that is not a message is append_many's to refuse, inside the transaction
    messages = [_redacted(m) if isinstance(m, Message) else m for m in imported.messages]
    with store.conn:
        row = store.create(workspace, imported.title or None)
        store.append_many(row.session_id, messages)
        store.set_state(row.session_id, IMPORT_STATE_KEY, import_info(imported))
    return row.session_id


def _redacted(message: Message) -> Message:
    """``message`` with the secrets in its text and its tool calls' arguments replaced."""
    text = redact(message.content)
    calls = [redact(call.arguments) for call in message.tool_calls]
    if not text.count and not any(c.count for c in calls):
        return message
    return message.model_copy(
        update={
            "content": text.text,
            "tool_calls": tuple(
                call.model_copy(update={"arguments": c.text})
                for call, c in zip(message.tool_calls, calls, strict=True)
            ),
        }
    )
