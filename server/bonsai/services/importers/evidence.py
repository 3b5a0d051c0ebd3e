"""Typed evidence for a tool call and its result, shared by every importer.

``tool_evidence`` maps common tool names (an editor with view/create/
str_replace/insert, read/write/edit tools, search and list tools, shell tools)
to :class:`Evidence`. Reads get the sha256 of the text the tool returned.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from bonsai.domain import Evidence, content_hash
from bonsai.services.importers.shell import shell_evidence

DIR_LISTING = "Here's the files and directories up to"
WINDOW_HEADER = re.compile(r"^\[File: (.+?) \((\d+) lines total[^)\n]*\)\]", re.MULTILINE)
WINDOW_LINE = re.compile(r"^(\d+)[:|]", re.MULTILINE)
CAT_N_LINE = re.compile(r"^ *(\d+)\t", re.MULTILINE)
CLIPPED = "<response clipped>"
EDIT_FAILURES = (
    "Your proposed edit has introduced new syntax error",
    "No replacement was performed",
    "No exact match found",
    "ERROR:",
)
FAILURE_SCAN = 300

EDITOR_TOOLS = frozenset({"str_replace_editor", "str_replace_based_edit_tool", "text_editor"})
READ_TOOLS = frozenset({"read", "read_file", "view", "view_file", "open_file", "cat"})
EDIT_TOOLS = frozenset(
    {"edit", "edit_file", "str_replace", "replace", "apply_patch", "insert", "multi_edit"}
)
WRITE_TOOLS = frozenset({"write", "write_file", "create", "create_file"})
SEARCH_TOOLS = frozenset(
    {"grep", "search", "rg", "ripgrep", "glob", "find", "find_file", "search_dir", "search_file"}
)
LIST_TOOLS = frozenset({"ls", "list_dir", "list_directory", "list_files"})
SHELL_TOOLS = frozenset(
    {"bash", "shell", "execute_bash", "run", "run_command", "terminal", "execute_command"}
)
PATH_KEYS = ("path", "file_path", "filename", "file", "file_name", "dir", "directory")


def with_hash(evidence: Evidence, result: str) -> Evidence:
    """Successful reads carry the sha256 of the exact text the tool returned."""
    if evidence.kind != "read" or not evidence.ok or evidence.content_hash is not None:
        return evidence
    return evidence.model_copy(update={"content_hash": content_hash(result)})


def parse_arguments(arguments: str) -> dict[str, Any] | None:
    try:
        value = json.loads(arguments)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def tool_evidence(name: str, arguments: str, result: str, *, ok: bool = True) -> Evidence | None:
    """Evidence for a call of tool ``name`` with JSON ``arguments`` that returned
    ``result``; ``None`` for tools it does not know."""
    args = parse_arguments(arguments)
    if args is None:
        return None
    found = _by_name(name.lower(), args, result, ok)
    return with_hash(found, result) if found is not None else None


def _by_name(name: str, args: dict[str, Any], result: str, ok: bool) -> Evidence | None:
    if name in EDITOR_TOOLS:
        return editor_evidence(args, result, ok=ok)
    if name in SHELL_TOOLS:
        command = _command_text(args.get("command", args.get("cmd")))
        return shell_evidence(command, ok=ok) if command is not None else None
    path = first_path(args)
    if name in READ_TOOLS:
        start, end = _read_range(args)
        return Evidence(kind="read", path=path, start_line=start, end_line=end, ok=ok)
    if name in EDIT_TOOLS:
        return Evidence(kind="edit", path=path, ok=ok)
    if name in WRITE_TOOLS:
        return Evidence(kind="write", path=path, ok=ok)
    if name in SEARCH_TOOLS:
        return Evidence(kind="search", path=path, ok=ok)
    if name in LIST_TOOLS:
        return Evidence(kind="list", path=path, ok=ok)
    return None


def _command_text(command: Any) -> str | None:
    """A shell command as text; an argv list (Codex's ``["bash", "-lc", CMD]``)
    gives the script it runs, or its words joined."""
    if isinstance(command, str):
        return command
    if isinstance(command, list) and all(isinstance(w, str) for w in command):
        if len(command) >= 3 and command[1] in ("-c", "-lc"):
            return str(command[2])
        return shlex.join(command)
    return None


def first_path(args: dict[str, Any]) -> str | None:
    for key in PATH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def editor_evidence(args: dict[str, Any], result: str, *, ok: bool = True) -> Evidence | None:
    """The str_replace_editor family: view / create / str_replace / insert / undo_edit."""
    command = args.get("command")
    path = first_path(args)
    if command == "view":
        if result.startswith(DIR_LISTING):
            return Evidence(kind="list", path=path, ok=ok)
        start, end = shown_range(view_range(args.get("view_range")), result)
        return Evidence(kind="read", path=path, start_line=start, end_line=end, ok=ok)
    ok = ok and not edit_failed(result)
    if command == "create":
        return Evidence(kind="write", path=path, ok=ok)
    if command in ("str_replace", "insert", "undo_edit"):
        return Evidence(kind="edit", path=path, ok=ok)
    return None


def shown_range(asked: tuple[int | None, int | None], result: str) -> tuple[int | None, int | None]:
    """The range a ``cat -n`` view really showed: what was asked for, unless the
    viewer clipped its output, then the first and last numbered lines."""
    if CLIPPED not in result:
        return asked
    numbers = [int(m.group(1)) for m in CAT_N_LINE.finditer(result)]
    return (numbers[0], numbers[-1]) if numbers else asked


def view_range(value: Any) -> tuple[int | None, int | None]:
    """``[start, end]`` with ``end == -1`` meaning to the end of the file."""
    if not (isinstance(value, list) and len(value) == 2):
        return None, None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return None, None
    start, end = value
    if start <= 1 and end <= 0:
        return None, None
    return max(start, 1), (end if end > 0 else None)


def edit_failed(result: str) -> bool:
    """True when an editor's output starts by reporting that nothing changed."""
    head = result[:FAILURE_SCAN]
    return any(marker in head for marker in EDIT_FAILURES)


def window_range(result: str) -> tuple[int | None, int | None]:
    """The lines a windowed file viewer showed (``[File: P (N lines total)]``
    then ``12:text`` or ``12|text`` lines); ``(None, None)`` for the whole file."""
    header = WINDOW_HEADER.search(result)
    numbers = [int(m.group(1)) for m in WINDOW_LINE.finditer(result)]
    if header is None or not numbers:
        return None, None
    if numbers[0] <= 1 and numbers[-1] >= int(header.group(2)):
        return None, None
    return numbers[0], numbers[-1]


def _read_range(args: dict[str, Any]) -> tuple[int | None, int | None]:
    if "view_range" in args:
        return view_range(args["view_range"])
    start = args.get("start_line", args.get("offset"))
    end = args.get("end_line")
    limit = args.get("limit")
    if isinstance(start, int) and isinstance(limit, int) and end is None:
        end = start + limit - 1
    return (start if isinstance(start, int) else None), (end if isinstance(end, int) else None)
