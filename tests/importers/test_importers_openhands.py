"""OpenHands output JSONL: several runs, metadata-backed and old flat events."""

from __future__ import annotations

import json

import pytest
from importer_helpers import FIXTURES, assert_paired

from bonsai.services.importers import ImportFormatError, import_file, parse_text

RUNS = FIXTURES / "openhands_runs.jsonl"


def test_first_run_by_default_and_the_run_count() -> None:
    session = import_file(RUNS)
    assert (session.format, session.runs, session.run) == ("openhands", 2, 0)
    assert session.title == "Fix the bug — ünïcode"
    assert import_file(RUNS, run=1).title == "Add a license"


def test_run_out_of_range_is_a_clear_error() -> None:
    with pytest.raises(ImportFormatError, match=r"run 5 does not exist: the file holds 2 runs"):
        import_file(RUNS, run=5)


def test_system_user_and_skipped_bookkeeping_events() -> None:
    messages = import_file(RUNS).messages
    assert messages[0].role == "system" and messages[0].content == "You are OpenHands agent.\n"
    assert messages[1].role == "user"
    assert messages[1].content == "Fix the bug — ünïcode\r\n  "
    assert messages[1].images == 1
    assert all("workspace context" not in m.content for m in messages)  # recall skipped


def test_calls_come_from_the_recorded_model_response() -> None:
    messages = import_file(RUNS).messages
    bash = messages[2]
    assert bash.content == "Let me look around."
    assert [(c.id, c.name, c.arguments) for c in bash.tool_calls] == [
        ("toolu_1", "execute_bash", '{"command": "ls /workspace"}')
    ]
    both = messages[4]  # two calls of one response share one assistant message
    assert [c.id for c in both.tool_calls] == ["toolu_2", "toolu_3"]
    assert [(m.role, m.tool_call_id) for m in messages[5:7]] == [
        ("tool", "toolu_2"),
        ("tool", "toolu_3"),
    ]
    assert_paired(messages)


def test_observation_evidence() -> None:
    messages = import_file(RUNS).messages
    listing, read, edit = messages[3].evidence, messages[5].evidence, messages[6].evidence
    assert listing is not None and (listing.kind, listing.path) == ("list", "/workspace")
    assert read is not None
    assert (read.kind, read.path, read.start_line, read.end_line) == (
        "read",
        "/workspace/a.py",
        5,
        9,
    )
    assert edit is not None and (edit.kind, edit.ok) == ("edit", False)


def test_error_without_cause_becomes_a_user_message_and_finish_ends_the_run() -> None:
    messages = import_file(RUNS).messages
    assert messages[7].role == "user"
    assert messages[7].content.startswith("Parameter 'command'")
    last = messages[-1]
    assert last.role == "assistant" and last.tool_calls[0].name == "finish"


def test_old_flat_format_pairs_in_order_with_synthetic_ids() -> None:
    messages = import_file(RUNS, run=1).messages
    assert [m.role for m in messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    call = messages[1].tool_calls[0]
    assert (call.id, call.name, json.loads(call.arguments)) == (
        "oh-e1",
        "run",
        {"command": "cat README.md"},
    )
    assert messages[2].content == "# Demo\r\n"
    read = messages[2].evidence
    assert read is not None and (read.kind, read.path) == ("read", "README.md")
    window = messages[4].evidence
    assert window is not None and (window.path, window.start_line, window.end_line) == (
        "/workspace/LICENSE",
        1,
        100,
    )
    failed = messages[6].evidence
    assert failed is not None and (failed.kind, failed.ok) == ("command", False)
    assert messages[-1].content == "Added the license." and not messages[-1].tool_calls
    assert_paired(messages)


def test_a_line_that_is_not_an_object_fails_the_whole_file() -> None:
    text = json.dumps({"history": []}) + "\n" + "[1]\n"
    with pytest.raises(ImportFormatError) as caught:
        parse_text(text, "openhands", source="out.jsonl")
    assert caught.value.line == 2
    assert "expected a JSON object" in str(caught.value)


def test_browse_write_and_directory_read_without_metadata() -> None:
    events = [
        {"id": 0, "source": "user", "action": "message", "args": {"content": "go"}},
        {
            "id": 1,
            "source": "agent",
            "action": "browse",
            "args": {"url": "http://127.0.0.1:8000/", "thought": "Look."},
        },
        {
            "id": 2,
            "source": "agent",
            "cause": 1,
            "observation": "browse",
            "content": "<html>hi</html>",
            "extras": {"url": "http://127.0.0.1:8000/"},
        },
        {
            "id": 3,
            "source": "agent",
            "action": "write",
            "args": {"path": "/w/new.txt", "content": "x"},
        },
        {
            "id": 4,
            "source": "agent",
            "cause": 3,
            "observation": "write",
            "content": "",
            "extras": {},
        },
        {"id": 5, "source": "agent", "action": "read", "args": {"path": "/w", "thought": ""}},
        {
            "id": 6,
            "source": "agent",
            "cause": 5,
            "observation": "read",
            "content": "Here's the files and directories up to 2 levels deep in /w:\n/w/new.txt\n",
            "extras": {},
        },
    ]
    messages = parse_text(json.dumps({"history": events}), "openhands", source="o.jsonl").messages
    assert [m.tool_calls[0].id for m in messages if m.tool_calls] == ["oh-1", "oh-3", "oh-5"]
    assert json.loads(messages[1].tool_calls[0].arguments) == {"url": "http://127.0.0.1:8000/"}
    kinds = [(m.evidence.kind, m.evidence.path) for m in messages if m.evidence]
    assert kinds == [("read", "http://127.0.0.1:8000/"), ("write", "/w/new.txt"), ("list", "/w")]
    assert_paired(messages)
