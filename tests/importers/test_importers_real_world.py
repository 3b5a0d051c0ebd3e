"""Recordings as real agents leave them: a Claude Code session with Claude Code's
own API-error notices in it, logs cut off mid-line by a crash, a first entry too
large for the format sniffer's window. Each recording is written here in the
agent's documented shape."""

from __future__ import annotations

import json
from typing import Any

from bonsai.services.importers import parse_text

BASE = {"sessionId": "s1", "cwd": "/w", "version": "2.0.55", "userType": "external"}


def _entry(uuid: str, parent: str | None, kind: str, message: Any, **extra: Any) -> dict:
    return {
        **BASE,
        "parentUuid": parent,
        "isSidechain": False,
        "type": kind,
        "uuid": uuid,
        "timestamp": "2026-04-17T08:10:28.297Z",
        "message": message,
        **extra,
    }


def _user(uuid: str, parent: str | None, content: Any) -> dict:
    return _entry(uuid, parent, "user", {"role": "user", "content": content})


def _reply(uuid: str, parent: str, text: str, msg_id: str) -> dict:
    content = [{"type": "text", "text": text}]
    message = {"id": msg_id, "model": "claude-sonnet-4-5", "role": "assistant", "content": content}
    return _entry(uuid, parent, "assistant", message)


def _api_error(uuid: str, parent: str, text: str) -> dict:
    """The row Claude Code writes itself when a call fails (model ``<synthetic>``)."""
    message = {
        "id": "3f0c2e9a-7d1b-4c55-9a1e-0d2b6f4e8c11",
        "model": "<synthetic>",
        "role": "assistant",
        "type": "message",
        "stop_reason": "stop_sequence",
        "stop_sequence": "",
        "usage": {"input_tokens": 0, "output_tokens": 0},
        "content": [{"type": "text", "text": text}],
    }
    return _entry(uuid, parent, "assistant", message, isApiErrorMessage=True, error="rate_limit")


def _jsonl(records: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def test_claude_codes_own_api_error_notices_are_not_the_models_words() -> None:
    # Claude Code writes "API Error: 529 Overloaded…" as an assistant row of its own
    # and never sends it to the model; imported, it became the model's reply.
    text = _jsonl(
        [
            _user("u1", None, "Fix the failing test"),
            _api_error("e1", "u1", "API Error: 529 Overloaded. This is a server-side issue."),
            _user("u2", "e1", "try again"),
            _reply("a1", "u2", "Fixed it.", "msg_1"),
        ]
    )
    session = parse_text(text, "auto", source="claude.jsonl")
    assert [(m.role, m.content) for m in session.messages] == [
        ("user", "Fix the failing test"),
        ("user", "try again"),
        ("assistant", "Fixed it."),
    ]
    notice = [w for w in session.warnings if w.startswith("claude.jsonl:2:")]
    assert notice == [
        "claude.jsonl:2: left out Claude Code's own notice (not the model's reply): "
        "API Error: 529 Overloaded. This is a server-side issue."
    ]


def test_a_session_that_only_hit_its_limit_has_nothing_to_import() -> None:
    text = _jsonl(
        [
            _user("u1", None, "hello"),
            _api_error("e1", "u1", "You've hit your limit · resets 1:20am (Europe/Berlin)"),
        ]
    )
    session = parse_text(text, "claude-code", source="claude.jsonl")
    assert [m.role for m in session.messages] == ["user"]
    assert any("hit your limit" in w for w in session.warnings)
