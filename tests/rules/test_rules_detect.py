"""Spotting standing instructions in what the user writes (pure)."""

from __future__ import annotations

import pytest

from bonsai.core.turn.rules import detect_rules, rule_key, rules_block


@pytest.mark.parametrize(
    ("message", "rules"),
    [
        ("Always use pnpm, not npm.", ["Always use pnpm, not npm"]),
        ("please never touch generated files", ["Never touch generated files"]),
        ("Fix the test. Don't add new dependencies!", ["Don't add new dependencies"]),
        ("From now on, prefer small commits over big ones", ["Prefer small commits over big ones"]),
        ("- avoid print statements in library code", ["Avoid print statements in library code"]),
        (
            "always run ruff before you finish.\nalso: do not edit the migrations",
            ["Always run ruff before you finish", "Do not edit the migrations"],
        ),
    ],
)
def test_instructions_are_detected(message: str, rules: list[str]) -> None:
    assert detect_rules(message) == rules


@pytest.mark.parametrize(
    "message",
    [
        "why does the build always fail?",  # a question, not an instruction
        "Should we never cache this?",
        "don't worry about the flaky test",  # conversation
        "never mind",
        "I always forget the flag",  # about the user, not for the agent
        "> never touch generated files",  # quoted text
        "```\n# always use pnpm here\nnever = 1\n```",  # code
        "Always.",  # too short to be a rule
        "fix the failing test in app.py",
    ],
)
def test_conversation_and_code_are_not_rules(message: str) -> None:
    assert detect_rules(message) == []


def test_repeats_in_one_message_count_once_and_at_most_three_are_taken() -> None:
    message = (
        "Always use pnpm. ALWAYS use pnpm! Never push to main. Never rebase shared branches. "
        "Never squash my commits."
    )
    assert detect_rules(message) == [
        "Always use pnpm",
        "Never push to main",
        "Never rebase shared branches",
    ]


def test_the_same_rule_in_other_words_shares_a_key() -> None:
    assert rule_key("Don't touch  generated files.") == rule_key("do not touch generated files")
    assert rule_key("Always use pnpm") != rule_key("Always use npm")


def test_the_block_lists_rules_under_one_heading_and_is_empty_without_rules() -> None:
    assert rules_block([]) == []
    block = rules_block(["Always use pnpm", "Never push"])
    assert block[0].startswith("Rules")
    assert block[1:] == ["- Always use pnpm", "- Never push"]
    assert rules_block([f"r{i}" for i in range(40)], max_listed=30)[-1].startswith("- … and 10")
