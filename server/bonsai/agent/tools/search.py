"""glob and grep over the workspace (skipping VCS, vendored and binary files)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from bonsai.agent.tools.base import (
    Args,
    Tool,
    ToolContext,
    ToolFailure,
    ToolResult,
    arg_str,
    schema,
)
from bonsai.agent.tools.paths import relative, resolve_in_workspace
from bonsai.domain import Evidence

SKIP_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".tox"}
MAX_RESULTS = 500
MAX_FILE_BYTES = 5 * 1024 * 1024


def walk_files(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            yield Path(dirpath) / name


async def glob_tool(ctx: ToolContext, args: Args) -> ToolResult:
    pattern = arg_str(args, "pattern")
    base = resolve_in_workspace(ctx.workspace, arg_str(args, "path", required=False) or ".")
    matches = [
        relative(ctx.workspace, p)
        for p in sorted(base.glob(pattern))
        if not (set(p.relative_to(base).parts) & SKIP_DIRS)
    ]
    shown = matches[:MAX_RESULTS]
    more = f"\n[{len(matches) - MAX_RESULTS} more]" if len(matches) > MAX_RESULTS else ""
    text = "\n".join(shown) + more if shown else f"no files match {pattern!r}"
    return ToolResult(text, Evidence(kind="search", path=relative(ctx.workspace, base)))


def _grep_file(path: Path, regex: re.Pattern[str]) -> Iterator[tuple[int, str]]:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return
        data = path.read_bytes()
    except OSError:
        return
    if b"\0" in data[:8192]:
        return
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if regex.search(line):
            yield number, line[:300]


async def grep(ctx: ToolContext, args: Args) -> ToolResult:
    flags = re.IGNORECASE if args.get("ignore_case") else 0
    try:
        regex = re.compile(arg_str(args, "pattern"), flags)
    except re.error as error:
        raise ToolFailure(f"invalid regular expression: {error}") from None
    base = resolve_in_workspace(ctx.workspace, arg_str(args, "path", required=False) or ".")
    name_glob = arg_str(args, "glob", required=False)
    files = [base] if base.is_file() else walk_files(base)
    hits: list[str] = []
    for path in files:
        if name_glob and not path.match(name_glob):
            continue
        for number, line in _grep_file(path, regex):
            hits.append(f"{relative(ctx.workspace, path)}:{number}: {line}")
            if len(hits) > MAX_RESULTS:
                break
        if len(hits) > MAX_RESULTS:
            hits[MAX_RESULTS:] = [f"[stopped after {MAX_RESULTS} matches]"]
            break
    text = "\n".join(hits) if hits else f"no matches for {regex.pattern!r}"
    return ToolResult(text, Evidence(kind="search", path=relative(ctx.workspace, base)))


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
