"""Forward-only schema migrations. Append new versions; never edit old ones.

**Invariant:** ``messages`` is an append-only log. No code path updates or
deletes a message row except deleting its whole session. Views (ledger state,
stubs, episodes, tree) are derived from the log plus their own rows.
"""

from __future__ import annotations

V1 = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    workspace TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE messages (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    created_at REAL NOT NULL,
    UNIQUE (session_id, seq)
);
CREATE INDEX messages_by_session ON messages(session_id, seq);
"""

V2 = """
ALTER TABLE messages ADD COLUMN body TEXT;
ALTER TABLE messages ADD COLUMN turn_id TEXT;
CREATE TABLE tool_outputs (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    tool_call_id TEXT NOT NULL,
    content TEXT NOT NULL,
    PRIMARY KEY (session_id, tool_call_id)
);
CREATE TABLE partials (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    turn_id TEXT NOT NULL,
    content TEXT NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (session_id, turn_id)
);
CREATE TABLE turns (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    turn_id TEXT NOT NULL,
    n INTEGER NOT NULL,
    status TEXT NOT NULL,
    usage TEXT,
    events TEXT NOT NULL DEFAULT '[]',
    started_at REAL NOT NULL,
    ended_at REAL,
    PRIMARY KEY (session_id, turn_id)
);
CREATE TABLE ctx_actions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    node_id TEXT NOT NULL,
    action TEXT NOT NULL,
    detail TEXT,
    created_at REAL NOT NULL
);
CREATE INDEX ctx_actions_by_session ON ctx_actions(session_id, id);
CREATE TABLE session_state (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (session_id, key)
);
CREATE VIRTUAL TABLE messages_fts USING fts5(
    content, session_id UNINDEXED, message_id UNINDEXED, tokenize='porter unicode61'
);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(content, session_id, message_id)
    VALUES (new.content, new.session_id, new.id);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    DELETE FROM messages_fts WHERE message_id = old.id;
END;
INSERT INTO messages_fts(content, session_id, message_id)
    SELECT content, session_id, id FROM messages;
"""

V3 = """
CREATE TABLE tree_ops (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    op TEXT NOT NULL,
    node_id TEXT NOT NULL,
    parent_id TEXT,
    after_seq INTEGER NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX tree_ops_by_session ON tree_ops(session_id, id);
"""

V4 = """
CREATE TABLE rules (
    id TEXT PRIMARY KEY,
    workspace TEXT NOT NULL,
    text TEXT NOT NULL,
    key TEXT NOT NULL,
    source TEXT NOT NULL,
    enabled INTEGER NOT NULL DEFAULT 1,
    origin TEXT,
    origin_hash TEXT,
    created_at REAL NOT NULL,
    deleted_at REAL
);
CREATE INDEX rules_by_workspace ON rules(workspace, created_at);
"""

MIGRATIONS: list[tuple[int, str]] = [(1, V1), (2, V2), (3, V3), (4, V4)]
SCHEMA_VERSION = MIGRATIONS[-1][0]
