"""Searching one session's full history (FTS5 BM25 over the append-only log).

The one search behind the agent's ``recall`` tool, ``bonsai/episodes/recall``
and ``bonsai recall``. It sees everything the log holds, including what
stubs, summaries and archives hid from the model; it never crosses sessions.
"""

from __future__ import annotations

from dataclasses import dataclass

import apsw

from bonsai.core.retrieval.query import fts_match_expression


@dataclass(frozen=True)
class HistoryHit:
    message_id: str
    score: float  # higher is better (negated bm25)
    snippet: str


def search_history(
    conn: apsw.Connection, session_id: str, query: str, limit: int = 5
) -> list[HistoryHit]:
    expression = fts_match_expression(query)
    if expression is None:
        return []
    rows = conn.execute(
        "SELECT message_id, bm25(messages_fts), snippet(messages_fts, 0, '«', '»', ' … ', 16)"
        " FROM messages_fts WHERE messages_fts MATCH ? AND session_id = ?"
        " ORDER BY bm25(messages_fts), message_id LIMIT ?",
        (expression, session_id, limit),
    )
    return [HistoryHit(row[0], round(-float(row[1]), 4), row[2]) for row in rows]
