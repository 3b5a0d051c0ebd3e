"""glob and grep over the workspace (skipping VCS, vendored and binary files)."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import PurePosixPath

from bonsai.agent.tools.base import (
    Args,
    Tool,
    ToolContext,
    ToolFailure,
    ToolResult,
    arg_str,
    schema,
)
from bonsai.agent.tools.names import shown_name
from bonsai.agent.tools.paths import workspace
from bonsai.agent.tools.walk import PatternError, Walk, compile_glob, entries
from bonsai.domain import Evidence
from bonsai.services.fs.confined import ConfinementError, Workspace, open_entry
from bonsai.services.redaction import redact

MAX_RESULTS = 500
MAX_FILE_BYTES = 5 * 1024 * 1024


async def glob_tool(ctx: ToolContext, args: Args) -> ToolResult:
    pattern = arg_str(args, "pattern")
    try:
        glob = compile_glob(pattern)
    except PatternError as error:
        raise ToolFailure(str(error)) from None
    walk = Walk()
    matches: list[str] = []
    with workspace(ctx.workspace) as ws:
        _, base = _base_dir(ws, arg_str(args, "path", required=False) or ".")
        start = "/".join(p for p in (base, *glob.base) if p not in ("", "."))
        prefix = "" if base == "." else base + "/"
        try:
            found = entries(ws, start or ".", walk, glob.depth)
            for entry in found:
                under = entry.rel[len(prefix) :] if entry.rel.startswith(prefix) else entry.rel
                if glob.regex.match(under):
                    matches.append(entry.rel)
        except (ConfinementError, FileNotFoundError, NotADirectoryError):
            pass  # the pattern's fixed folder is missing or leads out: no matches
    matches.sort()
    shown = [shown_name(match) for match in matches[:MAX_RESULTS]]
    more = f"\n[{len(matches) - MAX_RESULTS} more]" if len(matches) > MAX_RESULTS else ""
    text = "\n".join(shown) + more if shown else f"no files match {pattern!r}"
    return ToolResult(text + walk.note(), Evidence(kind="search", path=base))


def _base_dir(ws: Workspace, raw: str) -> tuple[bool, str]:
    """Whether ``raw`` is a file, and its real workspace-relative path."""
    target = ws.target(raw, argument="path")
    try:
        if not target.name:
            return False, target.rel
        st = os.stat(target.name, dir_fd=target.dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        raise ToolFailure(f"no such file or directory: {raw}") from None
    finally:
        target.close()
    return not stat.S_ISDIR(st.st_mode), target.rel


def _grep_text(fd: int) -> str | None:
    """The file's text, redacted, or None when it is too large or binary."""
    with os.fdopen(fd, "rb") as handle:
        if os.fstat(handle.fileno()).st_size > MAX_FILE_BYTES:
            return None
        data = handle.read(MAX_FILE_BYTES + 1)
    if b"\0" in data[:8192]:
        return None
    return redact(data.decode("utf-8", errors="replace")).text


def _grep_lines(text: str, regex: re.Pattern[str]) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(text.splitlines(), 1):
        if regex.search(line):
            yield number, line[:300]


async def grep(ctx: ToolContext, args: Args) -> ToolResult:
    flags = re.IGNORECASE if args.get("ignore_case") else 0
    try:
        regex = re.compile(arg_str(args, "pattern"), flags)
    except re.error as error:
        raise ToolFailure(f"invalid regular expression: {error}") from None
    name_glob = arg_str(args, "glob", required=False)
    if "\0" in name_glob:
        raise ToolFailure("'glob' contains a NUL byte; refused")
    walk = Walk()
    hits: list[str] = []
    with workspace(ctx.workspace) as ws:
        is_file, base = _base_dir(ws, arg_str(args, "path", required=False) or ".")
        for rel, text in _texts(ws, base, is_file, walk):
            if name_glob and not PurePosixPath(rel).match(name_glob):
                continue
            for number, line in _grep_lines(text, regex):
                hits.append(f"{shown_name(rel)}:{number}: {line}")
                if len(hits) > MAX_RESULTS:
                    break
            if len(hits) > MAX_RESULTS:
                hits[MAX_RESULTS:] = [f"[stopped after {MAX_RESULTS} matches]"]
                break
    text = "\n".join(hits) if hits else f"no matches for {regex.pattern!r}"
    return ToolResult(text + walk.note(), Evidence(kind="search", path=base))


def _texts(ws: Workspace, base: str, is_file: bool, walk: Walk) -> Iterator[tuple[str, str]]:
    """(path, redacted text) of every searchable file under ``base``."""
    if is_file:
        fd, rel = ws.open_file(base)
        text = _grep_text(fd)
        if text is not None:
            yield rel, text
        return
    for entry in entries(ws, base, walk):
        if entry.is_dir:
            continue
        try:
            if entry.is_link:
                fd, _ = ws.open_file(entry.rel)
            else:
                fd = open_entry(entry.dir_fd, entry.name, entry.rel)
        except (OSError, ConfinementError):
            continue  # changed under us, hard-linked, or unreadable: not searched
        text = _grep_text(fd)
        if text is not None:
            yield entry.rel, text


PATH = {"type": "string", "description": "directory or file, relative to the workspace"}

TOOLS = [
    Tool(
        "glob",
        "Find files by glob pattern (e.g. '**/*.py').",
        schema({"pattern": {"type": "string"}, "path": PATH}, ["pattern"]),
        glob_tool,
    ),
    Tool(
        "grep",
        "Search file contents with a regular expression; prints path:line: text.",
        schema(
            {
                "pattern": {"type": "string"},
                "path": PATH,
                "glob": {"type": "string"},
                "ignore_case": {"type": "boolean"},
            },
            ["pattern"],
        ),
        grep,
    ),
]
