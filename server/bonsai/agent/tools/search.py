"""glob and grep over the workspace (skipping VCS, vendored and binary files)."""

from __future__ import annotations

import asyncio
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import regex

from bonsai.agent.tools.base import (
    Args,
    Tool,
    ToolContext,
    ToolFailure,
    ToolResult,
    arg_str,
    schema,
)
from bonsai.agent.tools.paths import workspace
from bonsai.agent.tools.walk import Glob, PatternError, Walk, compile_glob, entries
from bonsai.domain import Evidence
from bonsai.services.fs.confined import ConfinementError, Workspace, open_entry
from bonsai.services.redaction import redact
from bonsai.shown_names import shown_name

MAX_RESULTS = 500
MAX_FILE_BYTES = 5 * 1024 * 1024
FILE_BUDGET_S = 2.0  # one file's search (a backtracking pattern over a minified line)
TOTAL_BUDGET_S = 20.0  # one grep's
LONG_LINE = 256  # characters from which a line's search has a timeout


async def glob_tool(ctx: ToolContext, args: Args) -> ToolResult:
    pattern = arg_str(args, "pattern")
    try:
        glob = compile_glob(pattern)
    except (PatternError, regex.error) as error:
        raise ToolFailure(str(error)) from None
    path = arg_str(args, "path", required=False) or "."
    # off the event loop: a walk of a large tree takes seconds
    return await asyncio.to_thread(_glob, ctx.workspace, pattern, glob, path)


def _glob(root: Path, pattern: str, glob: Glob, path: str) -> ToolResult:
    walk, budget = Walk(), _Budget()
    matches: list[str] = []
    with workspace(root) as ws:
        _, base = _base_dir(ws, path)
        start = "/".join(p for p in (base, *glob.base) if p not in ("", "."))
        prefix = "" if base == "." else base + "/"
        deadline = budget.started + TOTAL_BUDGET_S
        try:
            found = entries(ws, start or ".", walk, glob.depth)
            for entry in found:
                under = entry.rel[len(prefix) :] if entry.rel.startswith(prefix) else entry.rel
                timeout = max(deadline - time.monotonic(), 0.001)
                if glob.regex.match(under, timeout=timeout):
                    matches.append(entry.rel)
        except (ConfinementError, FileNotFoundError, NotADirectoryError):
            pass  # the pattern's fixed folder is missing or leads out: no matches
        except TimeoutError:
            budget.stopped = True
    matches.sort()
    shown = [shown_name(match) for match in matches[:MAX_RESULTS]]
    more = f"\n[{len(matches) - MAX_RESULTS} more]" if len(matches) > MAX_RESULTS else ""
    text = "\n".join(shown) + more if shown else f"no files match {pattern!r}"
    return ToolResult(text + walk.note() + budget.note(), Evidence(kind="search", path=base))


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


def _grep_lines(
    text: str, pattern: regex.Pattern[str], budget: _Budget
) -> Iterator[tuple[int, str]]:
    """Matching lines; TimeoutError once the file's share of the budget is spent.

    A long line (minified, generated) is searched with what is left of it as
    ``regex``'s timeout: backtracking grows with a line's length. A timeout costs
    each call about 3 µs, three times an ordinary line's search, so the lines of
    ordinary code are searched without one and the clock is read between them."""
    deadline = budget.file_deadline()
    for number, line in enumerate(text.splitlines(), 1):
        if len(line) < LONG_LINE:
            found = pattern.search(line)
            if number % 256 == 0 and time.monotonic() > deadline:
                raise TimeoutError
        else:
            found = pattern.search(line, timeout=max(deadline - time.monotonic(), 0.001))
        if found:
            yield number, line[:300]


@dataclass
class _Budget:
    """How long one grep may search: ``FILE_BUDGET_S`` in any one file (a pattern
    that backtracks past it there gives that file up), ``TOTAL_BUDGET_S`` in all."""

    started: float = field(default_factory=time.monotonic)
    given_up: list[str] = field(default_factory=list)
    stopped: bool = False

    def file_deadline(self) -> float:
        return min(time.monotonic() + FILE_BUDGET_S, self.started + TOTAL_BUDGET_S)

    def spent(self) -> bool:
        self.stopped = time.monotonic() >= self.started + TOTAL_BUDGET_S
        return self.stopped

    def note(self) -> str:
        notes = []
        if self.given_up:
            shown = ", ".join(shown_name(rel) for rel in self.given_up[:5])
            more = " …" if len(self.given_up) > 5 else ""
            notes.append(
                f"\n[the pattern took too long in {len(self.given_up)} file(s), not searched "
                f"to the end: {shown}{more}; a pattern with fewer '.*' runs searches them]"
            )
        if self.stopped:
            notes.append(f"\n[stopped after {TOTAL_BUDGET_S:.0f} s; the other files not searched]")
        return "".join(notes)


async def grep(ctx: ToolContext, args: Args) -> ToolResult:
    flags = regex.IGNORECASE if args.get("ignore_case") else 0
    try:
        pattern = regex.compile(arg_str(args, "pattern"), flags)
    except (regex.error, OverflowError) as error:
        raise ToolFailure(f"invalid regular expression: {error}") from None
    name_glob = arg_str(args, "glob", required=False)
    if "\0" in name_glob:
        raise ToolFailure("'glob' contains a NUL byte; refused")
    path = arg_str(args, "path", required=False) or "."
    # off the event loop (``regex`` lets go of the GIL while it matches): every
    # other session streams and every client is answered while a search runs
    return await asyncio.to_thread(_grep, ctx.workspace, pattern, name_glob, path)


def _grep(root: Path, pattern: regex.Pattern[str], name_glob: str, path: str) -> ToolResult:
    walk, budget = Walk(), _Budget()
    hits: list[str] = []
    with workspace(root) as ws:
        is_file, base = _base_dir(ws, path)
        for rel, text in _texts(ws, base, is_file, walk):
            if name_glob and not PurePosixPath(rel).match(name_glob):
                continue
            try:
                for number, line in _grep_lines(text, pattern, budget):
                    hits.append(f"{shown_name(rel)}:{number}: {line}")
                    if len(hits) > MAX_RESULTS:
                        break
            except TimeoutError:
                budget.given_up.append(rel)
            if len(hits) > MAX_RESULTS:
                hits[MAX_RESULTS:] = [f"[stopped after {MAX_RESULTS} matches]"]
                break
            if budget.spent():
                break
    text = "\n".join(hits) if hits else f"no matches for {pattern.pattern!r}"
    return ToolResult(text + walk.note() + budget.note(), Evidence(kind="search", path=base))


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
