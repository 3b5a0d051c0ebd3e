"""The rule store on a real database: CRUD, duplicates, tombstones, workspaces."""

from __future__ import annotations

from pathlib import Path

import pytest

from bonsai.services.rules import RuleError, RuleStore, UnknownRule
from bonsai.services.store.db import open_database


@pytest.fixture
def store(tmp_path: Path) -> RuleStore:
    return RuleStore(open_database(tmp_path / "bonsai.db"))


def test_rules_are_kept_per_workspace_in_order(store: RuleStore, tmp_path: Path) -> None:
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    first = store.add(a, "  Always use   pnpm ")
    store.add(b, "Never push")
    store.add(a + "/../a", "Prefer small commits")  # the same directory, spelled differently
    assert [r.text for r in store.rules(a)] == ["Always use pnpm", "Prefer small commits"]
    assert first.source == "user" and first.enabled and first.origin is None
    assert [r.text for r in store.rules(b)] == ["Never push"]


def test_edit_toggle_and_delete(store: RuleStore, tmp_path: Path) -> None:
    ws = str(tmp_path)
    rule = store.add(ws, "Always use pnpm")
    assert store.edit(rule.id, text="Always use pnpm 9").text == "Always use pnpm 9"
    assert store.edit(rule.id, enabled=False).enabled is False
    assert store.enabled_texts(ws) == []
    store.delete(rule.id)
    assert store.rules(ws) == []
    with pytest.raises(UnknownRule, match="no rule"):
        store.edit(rule.id, enabled=True)
    with pytest.raises(UnknownRule):
        store.delete("r_missing")


@pytest.mark.parametrize("text", ["", "   \n ", "x" * 301])
def test_empty_and_oversized_texts_are_refused(store: RuleStore, tmp_path: Path, text: str) -> None:
    with pytest.raises(RuleError, match=r"empty|limit is 300"):
        store.add(str(tmp_path), text)
    assert store.rules(str(tmp_path)) == []


def test_a_detected_rule_is_not_added_twice(store: RuleStore, tmp_path: Path) -> None:
    ws = str(tmp_path)
    store.add(ws, "Always use pnpm")
    added = store.add_detected(ws, "m_1", ["always use PNPM.", "Never push"])
    assert [(r.text, r.source, r.origin) for r in added] == [("Never push", "detected", "m_1")]
    assert store.add_detected(ws, "m_2", ["Never push"]) == []
    assert [r.text for r in store.rules(ws)] == ["Always use pnpm", "Never push"]


def test_a_deleted_detection_does_not_come_back_from_the_same_message(
    store: RuleStore, tmp_path: Path
) -> None:
    ws = str(tmp_path)
    (rule,) = store.add_detected(ws, "m_1", ["Never push"], origin_text="Never push.")
    store.delete(rule.id)
    assert store.add_detected(ws, "m_1", ["Never push"]) == []
    assert store.rules(ws) == []
    retry = store.add_detected(ws, "m_2", ["Never push"], origin_text="Never push.")
    assert retry == [], "nor from an identical copy of that message (a retry)"
    again = store.add_detected(ws, "m_9", ["Never push"])  # the user says it again, later
    assert [r.text for r in again] == ["Never push"]


def test_rules_survive_reopening_the_database(tmp_path: Path) -> None:
    path = tmp_path / "bonsai.db"
    conn = open_database(path)
    RuleStore(conn).add(str(tmp_path), "Always use pnpm")
    conn.close()
    assert RuleStore(open_database(path)).enabled_texts(str(tmp_path)) == ["Always use pnpm"]
