"""Search a stored session's messages (FTS5 over ``messages_fts``).

Until episodes exist this is what the agent's recall tool searches. Every
word of the query is matched as a quoted term (so punctuation in a query is
never FTS syntax); hits are ranked by bm25, best first.
"""

from __future__ import annotations

import re

import apsw
from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from bonsai.services.store.sessions import SessionStore

_WORD = re.compile(r"\w+", re.UNICODE)


class RecallHit(BaseModel):
    model_config = ConfigDict(frozen=True, alias_generator=to_camel, populate_by_name=True)

    message_id: str
    role: str
    episode: int | None
    score: float
    snippet: str
    text: str


def fts_query(query: str) -> str:
    """The query as FTS5 syntax: each word quoted, any of them may match."""
    words = _WORD.findall(query)
    if not words:
        raise ValueError(f"the query {query!r} has no words to search for")
    return " OR ".join(f'"{w}"' for w in words)


def recall(conn: apsw.Connection, session_id: str, query: str, limit: int = 10) -> list[RecallHit]:
    """Ranked hits in ``session_id`` for ``query`` (raises UnknownSession, ValueError)."""
    SessionStore(conn).get(session_id)
    rows = conn.execute(
        "SELECT f.message_id, m.role, bm25(messages_fts) AS rank,"
        " snippet(messages_fts, 0, '[', ']', '…', 16), m.content"
        " FROM messages_fts f JOIN messages m ON m.id = f.message_id"
        " WHERE messages_fts MATCH ? AND f.session_id = ?"
        " ORDER BY rank, m.seq LIMIT ?",
        (fts_query(query), session_id, limit),
    )
    return [
        RecallHit(
            message_id=message_id,
            role=role,
            episode=None,
            score=round(-float(rank), 4),
            snippet=snippet,
            text=content,
        )
        for message_id, role, rank, snippet, content in rows
    ]
