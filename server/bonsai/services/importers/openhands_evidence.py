"""Evidence for OpenHands actions (``read``, ``edit``, ``write``, ``run``,
``run_ipython``, ``browse``, ``browse_interactive``) and their observations."""

from __future__ import annotations

import re
from typing import Any

from bonsai.domain import Evidence, EvidenceKind
from bonsai.services.importers.evidence import (
    DIR_LISTING,
    edit_failed,
    shown_range,
    view_range,
    window_range,
    with_hash,
)
from bonsai.services.importers.shell import shell_evidence

AGENTSKILL = re.compile(r"^\s*(\w+)\(\s*(?:r?['\"]([^'\"]*)['\"])?", re.MULTILINE)
SKILL_KINDS: dict[str, EvidenceKind] = {
    "open_file": "read",
    "create_file": "write",
    "edit_file_by_replace": "edit",
    "insert_content_at_line": "edit",
    "append_file": "edit",
    "search_dir": "search",
    "search_file": "search",
    "find_file": "search",
}


def openhands_evidence(
    action: str, args: dict[str, Any], observation: str, content: str, extras: dict[str, Any]
) -> Evidence | None:
    ok = observation != "error" and not content.startswith("ERROR:")
    found = _evidence(action, args, content, extras, ok)
    return with_hash(found, content) if found is not None else None


def _evidence(
    action: str, args: dict[str, Any], content: str, extras: dict[str, Any], ok: bool
) -> Evidence | None:
    path = _str(args.get("path")) or _str(extras.get("path"))
    if action == "read":
        if content.startswith(DIR_LISTING):
            return Evidence(kind="list", path=path, ok=ok)
        start, end = shown_range(_read_range(args), content)
        return Evidence(kind="read", path=path, start_line=start, end_line=end, ok=ok)
    if action == "edit":
        kind: EvidenceKind = "write" if args.get("command") == "create" else "edit"
        return Evidence(kind=kind, path=path, ok=ok and not edit_failed(content))
    if action == "write":
        return Evidence(kind="write", path=path, ok=ok)
    if action == "run":
        command = _str(args.get("command")) or ""
        return shell_evidence(command, ok=ok and _exit_ok(args, extras))
    if action == "run_ipython":
        return _ipython(_str(args.get("code")) or "", content, ok)
    if action in ("browse", "browse_interactive"):
        url = _str(args.get("url")) or _str(extras.get("url"))
        return Evidence(kind="read", path=url, ok=ok)
    return None


def _read_range(args: dict[str, Any]) -> tuple[int | None, int | None]:
    if args.get("view_range") is not None:
        return view_range(args["view_range"])
    start, end = args.get("start", 0), args.get("end", -1)
    if not (isinstance(start, int) and isinstance(end, int)):
        return None, None
    return view_range([start, end])


def _exit_ok(args: dict[str, Any], extras: dict[str, Any]) -> bool:
    metadata = extras.get("metadata")
    code = metadata.get("exit_code") if isinstance(metadata, dict) else None
    if code is None:
        code = extras.get("exit_code", args.get("exit_code"))
    return not isinstance(code, int) or code == 0


def _ipython(code: str, content: str, ok: bool) -> Evidence:
    """``open_file(...)`` and friends from the agentskills library."""
    match = AGENTSKILL.search(code)
    if match is None or match.group(1) not in SKILL_KINDS:
        return Evidence(kind="command", ok=ok)
    kind = SKILL_KINDS[match.group(1)]
    path = (match.group(2) or None) if kind != "search" else None
    if kind == "read":
        start, end = window_range(content)
        return Evidence(kind="read", path=path, start_line=start, end_line=end, ok=ok)
    return Evidence(kind=kind, path=path, ok=ok and not edit_failed(content))


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
