"""SWE-agent .traj: text format, function calling, trajectory-only files."""

from __future__ import annotations

import json

from importer_helpers import FIXTURES, assert_paired

from bonsai.domain import content_hash
from bonsai.services.importers import import_file


def _history(name: str) -> list[dict[str, object]]:
    doc = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return list(doc["history"])


def test_text_format_keeps_history_content_byte_for_byte() -> None:
    session = import_file(FIXTURES / "swe_text.traj")
    assert session.format == "swe-agent"
    assert session.title == "swe_text"
    assert [m.content for m in session.messages] == [
        h["content"] for h in _history("swe_text.traj")
    ]
    assert "\r\n" in session.messages[1].content


def test_text_format_actions_become_synthetic_calls_answered_by_the_next_user_message() -> None:
    messages = import_file(FIXTURES / "swe_text.traj").messages
    roles = [m.role for m in messages]
    assert roles[:4] == ["system", "user", "assistant", "tool"]
    call = messages[2].tool_calls[0]
    assert (call.id, call.name) == ("swe-2", "open")
    assert json.loads(call.arguments) == {"command": "open src/app.py 90\n"}
    assert messages[3].tool_call_id == "swe-2"
    assert messages[-1].role == "assistant" and messages[-1].tool_calls[0].name == "submit"
    assert_paired(messages)


def test_windowed_reads_edits_and_searches_give_evidence() -> None:
    messages = import_file(FIXTURES / "swe_text.traj").messages
    by_call = {m.tool_call_id: m for m in messages if m.role == "tool"}
    window = by_call["swe-2"].evidence
    assert window is not None
    assert (window.kind, window.path, window.start_line, window.end_line) == (
        "read",
        "/repo/src/app.py",
        41,
        140,
    )
    assert window.content_hash == content_hash(by_call["swe-2"].content)
    whole = by_call["swe-4"].evidence  # a 3-line file shown entirely is a whole-file read
    assert whole is not None and (whole.path, whole.start_line, whole.end_line) == (
        "/repo/README.md",
        None,
        None,
    )
    search = by_call["swe-6"].evidence
    assert search is not None and (search.kind, search.path) == ("search", "src")
    edit, failed = by_call["swe-8"].evidence, by_call["swe-10"].evidence
    assert edit is not None and (edit.kind, edit.path, edit.ok) == (
        "edit",
        "/repo/src/app.py",
        True,
    )
    assert failed is not None and (failed.kind, failed.ok) == ("edit", False)
    goto = by_call["swe-12"].evidence
    assert goto is not None and (goto.kind, goto.start_line, goto.end_line) == ("read", 200, 250)
    command = by_call["swe-14"].evidence
    assert command is not None and command.kind == "command"


def test_function_calling_variant_uses_recorded_calls_and_renames_reused_ids() -> None:
    session = import_file(FIXTURES / "swe_function_calling.traj")
    messages = session.messages
    assert messages[1].content == "Issue: wrong rounding ±1\n"  # list-of-parts content
    first, second = messages[2].tool_calls[0], messages[4].tool_calls[0]
    assert first.arguments == (
        '{"command":"view","path":"/testbed/src/round.py","view_range":[10,20]}'
    )
    assert (first.id, second.id) == ("call_A", "call_A~2")
    assert messages[5].tool_call_id == "call_A~2"
    assert any("reuses tool call id 'call_A'" in w for w in session.warnings)
    view = messages[3].evidence
    assert view is not None and (view.kind, view.start_line, view.end_line) == ("read", 10, 20)
    edit = messages[5].evidence
    assert edit is not None and (edit.kind, edit.path) == ("edit", "/testbed/src/round.py")
    assert_paired(messages)


def test_trajectory_is_the_fallback_when_history_is_empty() -> None:
    session = import_file(FIXTURES / "swe_trajectory_only.traj")
    assert [m.role for m in session.messages] == ["assistant", "tool", "assistant", "tool"]
    assert session.messages[0].content == "Look.\n```\ncat setup.cfg\n```"
    read = session.messages[1].evidence
    assert read is not None and (read.kind, read.path) == ("read", "setup.cfg")
    assert any("rebuilt from trajectory" in w for w in session.warnings)
