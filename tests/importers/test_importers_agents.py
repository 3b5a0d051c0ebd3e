"""The agent formats: mini-swe-agent (both), Claude Code, Codex CLI, OpenHands
event streams and Anthropic Messages, each on a recording the test writes."""

from __future__ import annotations

import json

import pytest
import recordings
from importer_helpers import assert_paired

from bonsai.services.importers import ImportFormatError, parse_text


def test_mini_swe_agent_1_text_actions_become_bash_calls_and_outputs_their_results() -> None:
    session = parse_text(recordings.mini_swe_v1(), "auto")
    assert session.format == "mini-swe-agent"
    roles = [m.role for m in session.messages]
    assert roles == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
    ]
    call = session.messages[2].tool_calls[0]
    assert (call.name, json.loads(call.arguments)) == ("bash", {"command": "cat src/a.py"})
    result = session.messages[3]
    assert result.tool_call_id == call.id and result.content.startswith("<returncode>0")
    assert result.evidence is not None and (result.evidence.kind, result.evidence.path) == (
        "read",
        "src/a.py",
    )
    # two actions in one reply is a format error: no call, and the notice stays a user turn
    assert session.messages[4].tool_calls == ()
    assert session.messages[5].content == "Please always provide EXACTLY ONE action."
    assert session.outcome == "diff --git a/x b/x\n"
    assert_paired(session.messages)


def test_mini_swe_agent_title_is_the_issue_title_not_the_markup() -> None:
    session = parse_text(recordings.mini_swe_v1(), "auto")
    assert session.title == "Separability matrix is wrong for nested models"


def test_mini_swe_agent_1_1_exit_record_ends_the_run_and_gives_the_outcome() -> None:
    session = parse_text(recordings.mini_swe_v11(), "auto")
    assert session.format == "mini-swe-agent"
    assert [m.role for m in session.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert session.messages[3].tool_call_id == "call_1"
    assert session.messages[3].evidence is not None
    assert session.messages[3].evidence.kind == "read"
    assert session.outcome == "the patch"
    assert any("1 record(s) after the exit record" in w for w in session.warnings)
    assert any("'reasoning' ×1" in w for w in session.warnings)
    assert session.title == "Fix the parser crash on empty input."
    assert all("after the exit" not in m.content for m in session.messages)


def test_mini_swe_agent_extra_is_ignored_byte_for_byte_content() -> None:
    session = parse_text(recordings.mini_swe_v1(), "auto")
    assert session.messages[2].content == "THOUGHT: look.\n\n```bash\ncat src/a.py\n```"


def test_claude_code_follows_the_parent_chain_merges_streamed_blocks_and_crosses_compaction() -> (
    None
):
    session = parse_text(recordings.claude_code(), "auto")
    assert (session.format, session.runs, session.run) == ("claude-code", 2, 0)
    contents = [(m.role, m.content) for m in session.messages]
    assert ("assistant", "rewound") not in contents  # the abandoned branch is left out
    assert [m.role for m in session.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "user",
        "assistant",
    ]
    reply = session.messages[1]
    assert reply.content == "Reading." and [c.name for c in reply.tool_calls] == ["Read"]
    read = session.messages[2]
    assert read.evidence is not None and (read.evidence.kind, read.evidence.path) == (
        "read",
        "/w/a.py",
    )
    assert session.messages[5].content.startswith("This session is being continued.")
    assert session.title == "Fix the flaky test"  # the summary whose leaf is in this file
    assert any("compacted here" in w for w in session.warnings)
    skipped = next(w for w in session.warnings if "left out" in w)
    for kind in ("file-history-snapshot", "queue-operation", "progress", "thinking block"):
        assert kind in skipped
    assert_paired(session.messages)


def test_claude_code_sidechains_are_further_runs() -> None:
    side = parse_text(recordings.claude_code(), "auto", run=1)
    assert [(m.role, m.content) for m in side.messages] == [
        ("user", "find tests"),
        ("assistant", "tests/"),
    ]
    assert side.title == "find tests"
    with pytest.raises(ImportFormatError, match="run 2 does not exist: the file holds 2 runs"):
        parse_text(recordings.claude_code(), "auto", run=2)


def test_codex_rollout_messages_calls_outputs_and_compaction() -> None:
    session = parse_text(recordings.codex(), "auto")
    assert session.format == "codex"
    assert [m.role for m in session.messages] == [
        "user",
        "user",
        "assistant",
        "tool",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    shell = session.messages[2].tool_calls[0]
    assert (shell.id, shell.name) == ("call_1", "shell")
    output = session.messages[3]
    assert output.evidence is not None and output.evidence.kind == "read"  # bash -lc 'cat …'
    assert session.messages[4].content == "Summary: the CLI lives in src/a.py."
    patch = session.messages[5].tool_calls[0]
    assert (patch.name, patch.arguments) == ("apply_patch", "*** Begin Patch\n*** End Patch")
    assert session.messages[6].is_error and session.messages[6].content == "patch rejected"
    assert session.title == "Make the CLI print its version."
    skipped = next(w for w in session.warnings if "left out" in w)
    assert "'reasoning' ×1" in skipped and "'something_new' ×1" in skipped
    assert not any("event_msg" in w or "turn_context" in w for w in session.warnings)
    assert_paired(session.messages)


def test_openhands_event_stream_is_one_run() -> None:
    session = parse_text(recordings.openhands_events(), "auto")
    assert (session.format, session.runs) == ("openhands", 1)
    assert [m.role for m in session.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert session.messages[2].tool_calls[0].name == "run"
    assert session.title == "Add a README"


def test_openhands_events_one_a_line_are_one_run() -> None:
    events = json.loads(recordings.openhands_events())
    text = "".join(json.dumps(e) + "\n" for e in events)
    session = parse_text(text, "auto")
    assert (session.format, session.runs, len(session.messages)) == ("openhands", 1, 5)


def test_anthropic_messages_blocks() -> None:
    session = parse_text(recordings.anthropic(), "auto")
    assert session.format == "anthropic"
    assert [m.role for m in session.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "user",
        "assistant",
    ]
    assert session.messages[0].content == "You are a coding agent."
    assert session.messages[2].tool_calls[0].arguments == '{"command": "ls"}'
    assert session.messages[3].evidence is not None
    assert session.messages[3].evidence.kind == "list"
    assert session.messages[4].content == "Now read a.py."
    skipped = next(w for w in session.warnings if "left out" in w)
    assert "'thinking block' ×1" in skipped and "'document block' ×1" in skipped


def test_nothing_usable_is_an_error_naming_the_file() -> None:
    only_skipped = '{"type": "file-history-snapshot", "sessionId": "s"}\n{"type": "progress"}\n'
    with pytest.raises(ImportFormatError, match=r"claude\.jsonl.*(no run to import|holds no)"):
        parse_text(only_skipped, "claude-code", source="claude.jsonl")
    rollout = '{"timestamp": "t", "type": "session_meta", "payload": {}}\n'
    with pytest.raises(ImportFormatError, match="holds no message"):
        parse_text(rollout * 2, "codex", source="rollout.jsonl")


def test_aider_sessions_are_runs_and_an_unclosed_fence_is_recovered() -> None:
    text = recordings.aider()
    first = parse_text(text, "auto")
    assert (first.format, first.runs) == ("aider", 3)
    assert first.title == "add a greeting"
    second = parse_text(text, "auto", run=1)
    assert [m.role for m in second.messages] == ["user", "assistant", "user", "assistant"]
    assert second.messages[2].content == "are you done?  "
    assert any("closed at the next user turn" in w for w in second.warnings)


def test_an_unknown_role_is_skipped_and_counted_when_the_rest_is_usable() -> None:
    text = json.dumps(
        [
            {"role": "user", "content": "hi"},
            {"role": "exit", "content": "bye"},
            {"role": "robot", "content": "beep"},
            {"role": "assistant", "content": "hello"},
        ]
    )
    session = parse_text(text, "openai")
    assert [m.role for m in session.messages] == ["user", "assistant"]
    assert any("'role exit' ×1" in w and "'role robot' ×1" in w for w in session.warnings)
    doc = {
        "trajectory": [],
        "history": [
            {"role": "user", "content": "task"},
            {"role": "oracle", "content": "o"},
            {"role": "assistant", "content": "done"},
        ],
    }
    swe = parse_text(json.dumps(doc), "swe-agent")
    assert [m.role for m in swe.messages] == ["user", "assistant"]
    assert any("'role oracle' ×1" in w for w in swe.warnings)
