"""OpenAI-style messages: array, {"messages": [...]} (mini-swe-agent), JSONL."""

from __future__ import annotations

import json

from importer_helpers import FIXTURES, assert_paired

from bonsai.domain import content_hash
from bonsai.services.importers import import_file, parse_text


def test_array_keeps_every_content_byte_for_byte() -> None:
    raw = json.loads((FIXTURES / "openai_array.json").read_text(encoding="utf-8"))
    session = import_file(FIXTURES / "openai_array.json")
    assert session.format == "openai"
    assert session.runs == 1
    assert [m.role for m in session.messages] == [r["role"] for r in raw]
    assert session.messages[0].content == "You are a careful coding agent.  "
    assert session.messages[1].content == "Fix the crash in naïve_parse ☃\r\nsee line 2  \r\n"
    assert session.messages[3].content == raw[3]["content"]
    assert session.title == "Fix the crash in naïve_parse ☃"


def test_tool_calls_keep_arguments_verbatim_and_results_are_typed() -> None:
    messages = import_file(FIXTURES / "openai_array.json").messages
    read_call = messages[2].tool_calls[0]
    assert read_call.id == "call_read"
    assert read_call.name == "read_file"
    assert read_call.arguments == (
        '{"path": "src/parse.py",  "start_line": 10, "end_line": 20}'
    )  # the double space survives
    assert [c.id for c in messages[4].tool_calls] == ["call_edit", "call_grep"]
    result = messages[3]
    assert (result.role, result.tool_call_id, result.name) == ("tool", "call_read", "read_file")
    assert_paired(messages)


def test_evidence_for_read_edit_and_search() -> None:
    messages = import_file(FIXTURES / "openai_array.json").messages
    read = messages[3].evidence
    assert read is not None
    assert (read.kind, read.path, read.start_line, read.end_line) == (
        "read",
        "src/parse.py",
        10,
        20,
    )
    assert read.content_hash == content_hash(messages[3].content)
    edit = messages[5].evidence
    assert edit is not None and (edit.kind, edit.path) == ("edit", "src/parse.py")
    search = messages[6].evidence
    assert search is not None and search.kind == "search"


def test_content_parts_join_text_exactly_and_count_images() -> None:
    messages = import_file(FIXTURES / "openai_array.json").messages
    assert messages[7].content == "Here is a screenshot:\n  does it match?"
    assert messages[7].images == 1
    assert messages[8].content == "Yes — fixed.\n"
    assert messages[8].images == 0


def test_unknown_part_types_are_left_out_with_a_warning() -> None:
    text = json.dumps(
        [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "input_audio"}]}]
    )
    session = parse_text(text, "openai")
    assert session.messages[0].content == "a"
    assert any("input_audio" in w for w in session.warnings)


def test_jsonl_one_message_a_line() -> None:
    session = import_file(FIXTURES / "openai_chat.jsonl")
    assert [m.role for m in session.messages] == ["user", "assistant", "tool", "assistant"]
    evidence = session.messages[2].evidence
    assert evidence is not None and (evidence.kind, evidence.path) == ("search", "lib")
    assert session.warnings == []


def test_developer_role_is_system_and_legacy_function_calls_pair() -> None:
    text = json.dumps(
        [
            {"role": "developer", "content": "rules"},
            {"role": "assistant", "function_call": {"name": "ls", "arguments": "{}"}},
            {"role": "function", "name": "ls", "content": "a b"},
        ]
    )
    messages = parse_text(text, "openai").messages
    assert messages[0].role == "system"
    assert messages[2].role == "tool"
    assert messages[2].tool_call_id == messages[1].tool_calls[0].id
    assert messages[2].evidence is not None and messages[2].evidence.kind == "list"


def test_orphan_tool_result_is_kept_with_a_warning() -> None:
    session = import_file(FIXTURES / "bad_orphan_tool.json")
    orphan = session.messages[1]
    assert (orphan.role, orphan.tool_call_id) == ("tool", "nope")
    assert orphan.content == "result without a call"
    assert len(session.warnings) == 1
    assert "answers no earlier call" in session.warnings[0]


def test_identical_input_gives_identical_output() -> None:
    first = import_file(FIXTURES / "openai_array.json")
    second = import_file(FIXTURES / "openai_array.json")
    assert first.model_dump_json() == second.model_dump_json()
