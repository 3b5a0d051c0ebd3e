"""Domain → wire conversion, in one place."""

from __future__ import annotations

from bonsai.core.history.recalled import DATA_NAMES, recalled
from bonsai.domain import StoredMessage
from bonsai.protocol import models as m
from bonsai.services.store.sessions import SessionRow


def session_info(row: SessionRow) -> m.SessionInfo:
    return m.SessionInfo(
        session_id=row.session_id,
        title=row.title,
        workspace=row.workspace,
        created_at=row.created_at,
        updated_at=row.updated_at,
        message_count=row.message_count,
    )


def wire_message(stored: StoredMessage) -> m.WireMessage:
    message = stored.message
    calls = [
        m.WireToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in message.tool_calls
    ]
    note = None
    if message.role == "user" and message.name in DATA_NAMES:
        seen = recalled(message.content)
        note = m.RecalledNote(sources=seen.sources, titles=seen.titles, text=seen.text)
    return m.WireMessage(
        message_id=stored.message_id,
        role=message.role,
        content=message.content,
        created_at=stored.created_at,
        tool_calls=calls or None,
        tool_call_id=message.tool_call_id,
        name=message.name,
        status=None if message.status == "complete" else message.status,
        recalled=note,
    )
