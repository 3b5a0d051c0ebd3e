"""Deterministic texts the pipeline writes: stubs, labels, the joined system prompt.

Every function here maps equal inputs to equal bytes; stubs are stored in the
state once written, so later wording changes never alter an existing stub.
"""

from __future__ import annotations

import json
import re

from bonsai.core.context.pipeline_types import SystemPart
from bonsai.domain import Evidence, Message

STUB_PREFIX = "[stubbed by bonsai]"
SYSTEM_SEPARATOR = "\n\n"
_SPACES = re.compile(r"\s+")


def system_text(parts: list[SystemPart]) -> str:
    """The system prompt as one text (the same join the provider bodies use)."""
    return SYSTEM_SEPARATOR.join(p.text for p in parts)


def one_line(text: str, limit: int) -> str:
    """``text`` on one line, whitespace collapsed, cut at ``limit`` characters."""
    flat = _SPACES.sub(" ", text[: limit * 8]).strip()
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def span(evidence: Evidence) -> str:
    """```path``` or ```path`` lines a-b`` for read/edit evidence."""
    path = f"`{evidence.path}`"
    if evidence.start_line is None and evidence.end_line is None:
        return path
    lo = evidence.start_line or 1
    hi = "end" if evidence.end_line is None else str(evidence.end_line)
    return f"{path} lines {lo}-{hi}"


ARG_KEYS = ("command", "cmd", "query", "pattern", "path", "file_path", "url")


def main_argument(arguments: str) -> str:
    """The argument that says what a call did (its command, query or path), else
    the raw arguments; verbatim, on one line."""
    try:
        args = json.loads(arguments)
    except ValueError:
        return one_line(arguments, 200)
    if isinstance(args, dict):
        for key in ARG_KEYS:
            value = args.get(key)
            if isinstance(value, str) and value.strip():
                return one_line(value, 200)
    return one_line(arguments, 200)


def call_summary(name: str, arguments: str, evidence: Evidence | None, limit: int = 70) -> str:
    """A short, verbatim description of one tool call."""
    if evidence is not None and evidence.path:
        return f"{name} {span(evidence)}"
    arg = main_argument(arguments)
    if not arg or arg == "{}":
        return name
    return f"{name} `{one_line(arg, limit)}`"


def stub_text(*, what: str, size: str, reason: str, item_id: str, call_id: str | None) -> str:
    """The placeholder that replaces a node's content: what left, why, how to get it back
    (the model's ``read_tool_output`` handle when there is one, else the ledger)."""
    if call_id:
        back = f'read_tool_output("{call_id}") returns it'
    else:
        back = f"the user can restore {item_id} from /ctx"
    return f"{STUB_PREFIX} {what} ({size}) removed: {reason}; {back}."


LABEL_KEYS = ("command", "cmd", "pattern", "query", "url")


def plain_call_label(name: str, arguments: str, evidence: Evidence | None) -> str:
    """A tool call as a user reads it in a list: plain text, its meaningful argument
    first (grep's pattern, bash's command), then the file or directory it touched."""
    try:
        args = json.loads(arguments or "{}")
    except ValueError:
        args = {}
    args = args if isinstance(args, dict) else {}
    what = next((args[k] for k in LABEL_KEYS if isinstance(args.get(k), str) and args[k]), "")
    where = ""
    if evidence is not None and evidence.path:
        where = span(evidence).replace("`", "")
    elif isinstance(args.get("path"), str):
        where = args["path"]
    if what and where and where != ".":
        return f"{name} {what} in {where}"
    return f"{name} {what or where}".rstrip()


def message_label(message: Message, call: tuple[str, str] | None) -> str:
    """A one-line label for the ledger (plain text, no markup)."""
    if message.role == "tool":
        name, args = call if call else (message.name or "tool", "")
        return one_line(plain_call_label(name, args, message.evidence), 80)
    if message.role == "assistant" and message.tool_calls:
        names = ", ".join(c.name for c in message.tool_calls)
        head = one_line(message.content, 40)
        return f"{head} → {names}" if head else f"→ {names}"
    return one_line(message.content, 80) or f"({message.role} message)"


def message_kind(message: Message) -> str:
    return "tool_result" if message.role == "tool" else message.role
