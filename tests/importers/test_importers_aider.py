"""aider .aider.chat.history.md: sessions, markers, fences, exact bytes."""

from __future__ import annotations

from importer_helpers import FIXTURES, assert_paired

from bonsai.services.importers import import_file, parse_text

CHAT = FIXTURES / "chat.aider.chat.history.md"


def test_sessions_are_runs() -> None:
    first = import_file(CHAT)
    assert (first.format, first.runs, first.run) == ("aider", 2, 0)
    # titled from the first request typed (not the /add command, not the header)
    assert first.title == "make hello() greet in Ünïcode"
    assert import_file(CHAT, run=1).title == "windows line endings"


def test_user_lines_join_and_keep_trailing_spaces_and_unicode() -> None:
    messages = import_file(CHAT).messages
    users = [m.content for m in messages if m.role == "user" and m.name is None]
    assert users == [
        "/add hello.py  ",
        "make hello() greet in Ünïcode  \nand keep the trailing spaces   ",
        "thanks  ",
    ]


def test_fenced_assistant_text_is_not_split_on_marker_lines() -> None:
    messages = import_file(CHAT).messages
    reply = next(m for m in messages if m.role == "assistant")
    assert reply.content.startswith("Here is the change:\n\nhello.py\n```python\n")
    assert "#### not a user line, this is inside a fence\n> nor is this a tool line\n" in (
        reply.content
    )
    assert reply.content.endswith('    print("grüß dich")\n>>>>>>> REPLACE\n```')


def test_tool_output_answers_a_synthetic_call_on_the_preceding_assistant() -> None:
    messages = import_file(CHAT).messages
    index = next(i for i, m in enumerate(messages) if m.role == "tool")
    owner, result = messages[index - 1], messages[index]
    assert owner.role == "assistant"
    assert [c.name for c in owner.tool_calls] == ["aider"]
    assert result.tool_call_id == owner.tool_calls[0].id
    assert result.content == "Applied edit to hello.py  \nCommit 1a2b3c4 feat: greet  "
    assert result.evidence is not None
    assert (result.evidence.kind, result.evidence.path) == ("edit", "hello.py")
    assert_paired(messages)


def test_tool_output_with_no_assistant_before_it_is_a_user_message_named_aider() -> None:
    messages = import_file(CHAT).messages
    assert (messages[0].role, messages[0].name) == ("user", "aider")
    assert messages[0].content == "Aider v0.50.0  \nModel: gpt-4o with diff edit format  "
    added = messages[2]
    assert (added.role, added.name, added.content) == (
        "user",
        "aider",
        "Added hello.py to the chat  ",
    )


def test_crlf_inside_a_block_is_kept_and_the_final_line_ending_is_not_content() -> None:
    messages = import_file(CHAT, run=1).messages
    assert [m.role for m in messages] == ["user", "assistant", "tool"]
    assert messages[0].content == "windows line endings  \r\nsecond line"
    assert messages[1].content == "Reply line one\r\n\r\nReply line three"
    assert messages[2].content == "Tokens: 1.2k sent, 30 received."


def test_file_without_session_header_is_one_session_with_a_warning() -> None:
    session = parse_text("#### hi\n\nhello\n", "aider")
    assert [(m.role, m.content) for m in session.messages] == [
        ("user", "hi"),
        ("assistant", "hello"),
    ]
    assert session.runs == 1
    assert any("no '# aider chat started at' line" in w for w in session.warnings)


def test_an_unclosed_fence_is_closed_at_the_next_user_turn_with_a_warning() -> None:
    text = "# aider chat started at x\n\n#### go\n\n```python\ncode\n\n#### next turn\n\nok\n"
    session = parse_text(text, "aider")
    assert [m.role for m in session.messages] == ["user", "assistant", "user", "assistant"]
    assert session.messages[1].content == "```python\ncode\n"
    assert session.messages[2].content == "next turn"
    assert any(
        "1 unclosed code fence(s) closed at the next user turn" in w for w in session.warnings
    )


def test_a_fence_open_at_the_end_with_no_user_turn_after_it_is_reported() -> None:
    text = "# aider chat started at x\n\n#### go\n\n```python\nstill code\n"
    session = parse_text(text, "aider")
    assert [m.role for m in session.messages] == ["user", "assistant"]
    assert session.messages[1].content == "```python\nstill code\n"
    assert any("ends inside an assistant code fence" in w for w in session.warnings)
