"""aider's ``.aider.chat.history.md``.

A session starts at a ``# aider chat started at …`` line. ``#### `` lines are
what the user typed, ``> `` lines are aider's own output, everything else is
assistant text (inside an assistant code fence no line is a marker). Adjacent
lines of one kind, with any blank lines between them, form one message; blank
lines at the edges of a block only separate blocks. A message's content is its
lines with the marker (``#### ``/``> ``) removed and nothing else changed: the
two trailing spaces aider adds for markdown line breaks stay, and so do
CRLF line endings inside a block.

aider's output becomes the result of a synthetic ``aider`` tool call added to
the assistant message it follows, or a user message named ``aider`` when it
follows no assistant message (e.g. the reply to ``/add``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from bonsai.domain import Evidence, Message, ToolCall
from bonsai.services.importers.common import check_run, task_title
from bonsai.services.importers.model import ImportedSession

SESSION = re.compile(r"^# aider chat started at (.*?)\s*$")
APPLIED = re.compile(r"^Applied edit to (.+?)\s*$", re.MULTILINE)
FENCE = re.compile(r"^\s*(```|~~~)")
Kind = Literal["user", "tool", "assistant", "blank"]


@dataclass
class _Block:
    kind: Kind
    lines: list[str]


@dataclass
class _Session:
    title: str
    lines: list[str]


def parse(text: str, source: str, run: int = 0) -> ImportedSession:
    sessions, warnings = _sessions(text, source)
    check_run(run, len(sessions), source)
    session = sessions[run]
    blocks = _recovered_blocks(session, source, run, warnings)
    messages = _messages(blocks, run)
    return ImportedSession(
        format="aider",
        title=_title(messages, session.title),
        messages=messages,
        runs=len(sessions),
        run=run,
        source=source,
        warnings=warnings,
    )


def _title(messages: list[Message], header: str) -> str:
    """The first request the user typed (not a slash command), else the header."""
    for message in messages:
        if message.role == "user" and message.name is None and not message.content.startswith("/"):
            title = task_title(message.content)
            if title:
                return title
    return header


def _recovered_blocks(
    session: _Session, source: str, run: int, warnings: list[str]
) -> list[_Block]:
    """The session's blocks; a code fence still open at the end of the session is
    closed at the first user line (``#### ``) after it, with a warning, so the
    turns after it are read as turns (aider does not always close a fence when
    a reply is interrupted)."""
    closes: set[int] = set()
    while True:
        blocks, open_at = _blocks(session, closes)
        if open_at is None:
            break
        user = next(
            (
                i
                for i in range(open_at + 1, len(session.lines))
                if _bare(session.lines[i]).startswith("#### ")
            ),
            None,
        )
        if user is None:
            warnings.append(
                f"{source}: run {run} ends inside an assistant code fence; "
                "every line after the opening fence was read as assistant text"
            )
            break
        closes.add(user)
    if closes:
        warnings.append(
            f"{source}: run {run}: {len(closes)} unclosed code fence(s) closed at the next "
            "user turn"
        )
    return blocks


def _bare(line: str) -> str:
    return line.removesuffix("\r")


def _sessions(text: str, source: str) -> tuple[list[_Session], list[str]]:
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if SESSION.match(_bare(line))]
    warnings: list[str] = []
    if not starts:
        warnings.append(f"{source}: no '# aider chat started at' line; read as one session")
        return [_Session("aider chat", lines)], warnings
    preamble = [line for line in lines[: starts[0]] if line.strip()]
    if preamble:
        warnings.append(f"{source}: left out {len(preamble)} line(s) before the first session")
    sessions = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        match = SESSION.match(_bare(lines[start]))
        title = f"aider chat started at {match.group(1)}" if match else "aider chat"
        sessions.append(_Session(title, lines[start + 1 : end]))
    return sessions, warnings


def _classify(line: str, in_fence: bool) -> tuple[Kind, str]:
    bare = _bare(line)
    if in_fence:
        return "assistant", line
    if bare.startswith("#### ") or bare == "####":
        return "user", line[5:] if bare.startswith("#### ") else line[4:]
    if bare.startswith("> ") or bare == ">":
        return "tool", line[2:] if bare.startswith("> ") else line[1:]
    if not bare.strip():
        return "blank", line
    return "assistant", line


def _blocks(session: _Session, closes: set[int]) -> tuple[list[_Block], int | None]:
    """The session's blocks, and the line of the opening fence it ends inside
    (``None`` when every fence closed). A fence is closed before each line in
    ``closes``."""
    blocks: list[_Block] = []
    blanks: list[str] = []
    in_fence = False
    opened = 0
    for index, line in enumerate(session.lines):
        if index in closes:
            in_fence = False
        kind, body = _classify(line, in_fence)
        if kind == "blank":
            blanks.append(body)
            continue
        if kind == "assistant" and FENCE.match(_bare(line)):
            in_fence = not in_fence
            opened = index
        if blocks and blocks[-1].kind == kind:
            blocks[-1].lines.extend(blanks)
        else:
            blocks.append(_Block(kind, []))
        blanks = []
        blocks[-1].lines.append(body)
    return blocks, opened if in_fence else None


def _messages(blocks: list[_Block], run: int) -> list[Message]:
    """A CR before a block's final line break belongs to the line ending."""
    messages: list[Message] = []
    for index, block in enumerate(blocks):
        content = "\n".join(block.lines).removesuffix("\r")
        if block.kind == "tool":
            messages.extend(_tool_output(messages, content, f"aider-{run}-{index}"))
        elif block.kind == "user":
            messages.append(Message(role="user", content=content))
        else:
            messages.append(Message(role="assistant", content=content))
    return messages


def _tool_output(messages: list[Message], content: str, call_id: str) -> list[Message]:
    if not messages or messages[-1].role != "assistant":
        return [Message(role="user", content=content, name="aider")]
    call = ToolCall(id=call_id, name="aider", arguments="{}")
    owner = messages[-1]
    messages[-1] = owner.model_copy(update={"tool_calls": (*owner.tool_calls, call)})
    edited = APPLIED.search(content)
    evidence = Evidence(kind="edit", path=edited.group(1)) if edited else None
    return [
        Message(role="tool", content=content, tool_call_id=call_id, name="aider", evidence=evidence)
    ]
