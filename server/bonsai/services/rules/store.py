"""The rules of each workspace, in the daemon's one SQLite database.

Why the database and not a file in the workspace: one daemon owns it (no two
writers), writes are atomic, it survives restarts, and deleted detections are
kept as tombstones (``deleted_at``) so the same message never brings a rule
back that the user removed. Nothing lands in the user's repository.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import Any, Literal

import apsw

from bonsai.core.turn.rules import MAX_RULE_CHARS, clean_rule_text, rule_key
from bonsai.services.store.sessions import new_id
from bonsai.services.workspace import workspace_key

RuleSource = Literal["user", "detected"]
_COLUMNS = "id, workspace, text, source, enabled, origin, created_at"


class RuleError(ValueError):
    """A rule text the user must fix (empty, too long)."""


class UnknownRule(LookupError):
    def __init__(self, rule_id: str) -> None:
        super().__init__(f"no rule {rule_id!r} (it may have been deleted)")


@dataclass(frozen=True)
class Rule:
    id: str
    workspace: str
    text: str
    source: RuleSource
    enabled: bool
    origin: str | None  # the message a detected rule came from
    created_at: float


def checked_text(text: str) -> str:
    cleaned = clean_rule_text(text)
    if not cleaned:
        raise RuleError("rule text is empty")
    if len(cleaned) > MAX_RULE_CHARS:
        raise RuleError(
            f"rule text is {len(cleaned)} characters; the limit is {MAX_RULE_CHARS} "
            "(a rule is one short instruction; put longer guidance in a steering file)"
        )
    return cleaned


def _rule(row: Any) -> Rule:
    return Rule(row[0], row[1], row[2], row[3], bool(row[4]), row[5], row[6])


class RuleStore:
    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn

    def rules(self, workspace: str) -> list[Rule]:
        sql = (
            f"SELECT {_COLUMNS} FROM rules WHERE workspace = ? AND deleted_at IS NULL"
            " ORDER BY created_at, rowid"
        )
        return [_rule(row) for row in self.conn.execute(sql, (workspace_key(workspace),))]

    def enabled_texts(self, workspace: str) -> list[str]:
        return [rule.text for rule in self.rules(workspace) if rule.enabled]

    def get(self, rule_id: str) -> Rule:
        sql = f"SELECT {_COLUMNS} FROM rules WHERE id = ? AND deleted_at IS NULL"
        row = self.conn.execute(sql, (rule_id,)).fetchone()
        if row is None:
            raise UnknownRule(rule_id)
        return _rule(row)

    def add(
        self,
        workspace: str,
        text: str,
        source: RuleSource = "user",
        origin: str | None = None,
        origin_hash: str | None = None,
    ) -> Rule:
        cleaned = checked_text(text)
        rule_id = new_id("r")
        with self.conn:
            self.conn.execute(
                "INSERT INTO rules(id, workspace, text, key, source, enabled, origin, origin_hash,"
                " created_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?)",
                (
                    rule_id,
                    workspace_key(workspace),
                    cleaned,
                    rule_key(cleaned),
                    source,
                    origin,
                    origin_hash,
                    time.time(),
                ),
            )
        return self.get(rule_id)

    def edit(self, rule_id: str, text: str | None = None, enabled: bool | None = None) -> Rule:
        rule = self.get(rule_id)
        cleaned = rule.text if text is None else checked_text(text)
        on = rule.enabled if enabled is None else enabled
        with self.conn:
            self.conn.execute(
                "UPDATE rules SET text = ?, key = ?, enabled = ? WHERE id = ?",
                (cleaned, rule_key(cleaned), int(on), rule_id),
            )
        return self.get(rule_id)

    def delete(self, rule_id: str) -> Rule:
        """Soft delete: the row stays as a tombstone so detection skips it."""
        rule = self.get(rule_id)
        with self.conn:
            sql = "UPDATE rules SET deleted_at = ? WHERE id = ?"
            self.conn.execute(sql, (time.time(), rule_id))
        return rule

    def add_detected(
        self, workspace: str, origin: str, texts: list[str], origin_text: str = ""
    ) -> list[Rule]:
        """Store rules detected in message ``origin`` (whose text is ``origin_text``):
        a rule already present (same words) is not added twice, and one the user
        deleted is not brought back from the same message, nor from an identical
        copy of it (a retry sends the question again under a new id)."""
        ws = workspace_key(workspace)
        digest = hashlib.sha256(origin_text.encode()).hexdigest() if origin_text else None
        live = "SELECT 1 FROM rules WHERE workspace = ? AND key = ? AND deleted_at IS NULL"
        gone = (
            "SELECT 1 FROM rules WHERE workspace = ? AND key = ?"
            " AND (origin = ? OR (origin_hash IS NOT NULL AND origin_hash = ?))"
        )
        added: list[Rule] = []
        for text in texts:
            key = rule_key(clean_rule_text(text))
            if self.conn.execute(live, (ws, key)).fetchone() is not None:
                continue
            if self.conn.execute(gone, (ws, key, origin, digest)).fetchone() is not None:
                continue
            try:
                added.append(self.add(ws, text, "detected", origin, digest))
            except RuleError:
                continue
        return added
