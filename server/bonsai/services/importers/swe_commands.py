"""Evidence for SWE-agent commands, read from the action text and its observation.

The windowed editor (``open``, ``goto``, ``scroll_up``/``scroll_down``,
``create``, ``edit``, ``insert``) acts on the open file; its observations start
with ``[File: PATH (N lines total)]``, number each shown line ``N:`` and end
with ``(Open file: PATH)``. ``str_replace_editor`` names its path; the search
commands name a directory or file; anything else is a shell command.
"""

from __future__ import annotations

import re
import shlex

from bonsai.domain import Evidence
from bonsai.services.importers.evidence import (
    DIR_LISTING,
    WINDOW_HEADER,
    edit_failed,
    shown_range,
    view_range,
    window_range,
    with_hash,
)
from bonsai.services.importers.shell import shell_evidence

FOOTER = re.compile(r"^\(Open file: (.+?)\)\r?$", re.MULTILINE)
WINDOW_READS = frozenset({"open", "goto", "scroll_up", "scroll_down"})
EDITS = frozenset({"edit", "insert", "append"})
SEARCHES = frozenset({"search_dir", "search_file", "find_file"})
COMMANDS = WINDOW_READS | EDITS | SEARCHES | {"create", "submit", "str_replace_editor"}


def command_name(action: str) -> str:
    """The SWE-agent command an action runs, or ``bash`` for a shell command."""
    words = action.split(None, 1)
    return words[0] if words and words[0] in COMMANDS else "bash"


def open_file(observation: str) -> str | None:
    """The file the editor has open after this observation, if it says."""
    found = FOOTER.findall(observation)
    return found[-1] if found and found[-1] != "n/a" else None


def swe_evidence(action: str, observation: str, open_before: str | None) -> Evidence:
    words = _words(action)
    verb, args = (words[0], words[1:]) if words else ("", [])
    if verb in WINDOW_READS or verb == "create" or verb in EDITS:
        found = _editor(verb, args, observation, open_before)
    elif verb in SEARCHES:
        found = _search(verb, args, open_before)
    elif verb == "str_replace_editor":
        found = _str_replace_editor(args, observation)
    elif verb == "submit":
        found = Evidence(kind="command")
    else:
        found = shell_evidence(action)
    return with_hash(found, observation)


def _words(action: str) -> list[str]:
    first = action.split("\n", 1)[0]
    try:
        return shlex.split(first)
    except ValueError:
        return first.split()


def _editor(verb: str, args: list[str], observation: str, open_before: str | None) -> Evidence:
    header = WINDOW_HEADER.search(observation)
    path = _path(header.group(1) if header else None, open_file(observation))
    if verb in EDITS:
        return Evidence(kind="edit", path=path or open_before, ok=not edit_failed(observation))
    if verb == "create":
        return Evidence(kind="write", path=path or (args[0] if args else None), ok=bool(header))
    if header is None:
        fallback = args[0] if verb == "open" and args else open_before
        return Evidence(kind="read", path=fallback, ok=False)
    start, end = window_range(observation)
    return Evidence(kind="read", path=path, start_line=start, end_line=end)


def _path(header: str | None, footer: str | None) -> str | None:
    """The footer's absolute path when it names the header's file."""
    if header and footer and footer.endswith(header.lstrip("./")):
        return footer
    return header or footer


def _search(verb: str, args: list[str], open_before: str | None) -> Evidence:
    if verb == "search_file":
        return Evidence(kind="search", path=args[1] if len(args) > 1 else open_before)
    return Evidence(kind="search", path=args[1] if len(args) > 1 else None)


def _str_replace_editor(args: list[str], observation: str) -> Evidence:
    if len(args) < 2:
        return Evidence(kind="command", ok=False)
    command, path = args[0], args[1]
    if command == "view":
        if observation.startswith(DIR_LISTING):
            return Evidence(kind="list", path=path)
        start, end = shown_range(view_range(_view_range_flag(args)), observation)
        return Evidence(kind="read", path=path, start_line=start, end_line=end)
    ok = not edit_failed(observation)
    if command == "create":
        return Evidence(kind="write", path=path, ok=ok)
    return Evidence(kind="edit", path=path, ok=ok)


def _view_range_flag(args: list[str]) -> list[int] | None:
    if "--view_range" not in args:
        return None
    at = args.index("--view_range")
    try:
        return [int(args[at + 1]), int(args[at + 2])]
    except (IndexError, ValueError):
        return None
