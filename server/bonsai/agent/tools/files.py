"""read_file, list_dir, write_file, edit_file."""

from __future__ import annotations

import difflib
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from bonsai.agent.tools.base import (
    Args,
    Tool,
    ToolContext,
    ToolFailure,
    ToolResult,
    arg_int,
    arg_str,
    schema,
)
from bonsai.agent.tools.paths import relative, resolve_in_workspace
from bonsai.domain import Evidence, content_hash
from bonsai.services.privacy import workspace_file_mode

DEFAULT_LINES = 2_000
MAX_LINE_CHARS = 2_000
MAX_LIST = 1_000


@dataclass(frozen=True)
class LinesRead:
    lines: list[str]
    total: int
    range_digest: str  # sha256 of the raw bytes of the lines returned
    file_digest: str  # sha256 of the whole file


def _read_lines(path: Path, offset: int, limit: int) -> LinesRead:
    """Lines offset..offset+limit-1 (1-based) and the file's line count. Streams the
    file, so memory stays bounded however large it is. Digests follow the
    stale-read convention of ``project_context.range_hash`` (raw bytes, endings kept)."""
    out: list[str] = []
    total = 0
    whole, part = hashlib.sha256(), hashlib.sha256()
    with open(path, "rb") as handle:
        head = handle.read(8192)
        if b"\0" in head:
            raise ToolFailure(f"{path.name} is a binary file ({path.stat().st_size} bytes)")
        handle.seek(0)
        for raw in handle:
            total += 1
            whole.update(raw)
            if offset <= total < offset + limit:
                part.update(raw)
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                out.append(line[:MAX_LINE_CHARS])
    return LinesRead(out, total, part.hexdigest(), whole.hexdigest())


async def read_file(ctx: ToolContext, args: Args) -> ToolResult:
    path = resolve_in_workspace(ctx.workspace, arg_str(args, "path"))
    if not path.is_file():
        raise ToolFailure(f"no such file: {relative(ctx.workspace, path)}")
    offset = max(1, arg_int(args, "offset", 1) or 1)
    limit = max(1, arg_int(args, "limit", DEFAULT_LINES) or DEFAULT_LINES)
    read = _read_lines(path, offset, limit)
    numbered = "\n".join(f"{offset + i:6}\t{line}" for i, line in enumerate(read.lines))
    end = offset + len(read.lines) - 1
    whole = offset == 1 and end >= read.total
    note = "" if whole else f"\n[lines {offset}-{end} of {read.total}]"
    evidence = Evidence(
        kind="read",
        path=relative(ctx.workspace, path),
        start_line=None if whole else offset,
        end_line=None if whole else end,
        content_hash=read.file_digest if whole else read.range_digest,
    )
    return ToolResult(numbered + note, evidence)


async def list_dir(ctx: ToolContext, args: Args) -> ToolResult:
    path = resolve_in_workspace(ctx.workspace, arg_str(args, "path", required=False) or ".")
    if not path.is_dir():
        raise ToolFailure(f"not a directory: {relative(ctx.workspace, path)}")
    entries = sorted(os.scandir(path), key=lambda e: e.name)
    shown = [e.name + ("/" if e.is_dir() else "") for e in entries[:MAX_LIST]]
    more = f"\n[{len(entries) - MAX_LIST} more entries]" if len(entries) > MAX_LIST else ""
    rel = relative(ctx.workspace, path)
    return ToolResult("\n".join(shown) + more, Evidence(kind="list", path=rel))


def _diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    return "".join(lines)


def _current_text(path: Path) -> str:
    if not path.exists():
        return ""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ToolFailure(f"{path.name} is not UTF-8 text; refusing to edit it") from None


def _edited(ctx: ToolContext, args: Args) -> tuple[Path, str, str]:
    path = resolve_in_workspace(ctx.workspace, arg_str(args, "path"))
    if not path.is_file():
        raise ToolFailure(f"no such file: {relative(ctx.workspace, path)}")
    old, new = arg_str(args, "old_string"), arg_str(args, "new_string", required=False)
    before = _current_text(path)
    count = before.count(old)
    if count == 0:
        raise ToolFailure("old_string was not found in the file; read it again and retry")
    if count > 1 and not args.get("replace_all"):
        raise ToolFailure(
            f"old_string matches {count} places; add surrounding lines to make it unique "
            "or pass replace_all: true"
        )
    return path, before, before.replace(old, new)


def _edit_preview(ctx: ToolContext, args: Args) -> str | None:
    path, before, after = _edited(ctx, args)
    return _diff(relative(ctx.workspace, path), before, after)


async def edit_file(ctx: ToolContext, args: Args) -> ToolResult:
    path, before, after = _edited(ctx, args)
    _atomic_write(path, after)
    rel = relative(ctx.workspace, path)
    diff = _diff(rel, before, after)
    return ToolResult(
        f"edited {rel}\n{diff}", Evidence(kind="edit", path=rel, content_hash=content_hash(after))
    )


def _write_preview(ctx: ToolContext, args: Args) -> str | None:
    path = resolve_in_workspace(ctx.workspace, arg_str(args, "path"))
    content = arg_str(args, "content", required=False)
    return _diff(relative(ctx.workspace, path), _current_text(path), content)


async def write_file(ctx: ToolContext, args: Args) -> ToolResult:
    path = resolve_in_workspace(ctx.workspace, arg_str(args, "path"))
    content = arg_str(args, "content", required=False)
    existed = path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(path, content)
    rel = relative(ctx.workspace, path)
    verb = "overwrote" if existed else "created"
    evidence = Evidence(kind="write", path=rel, content_hash=content_hash(content))
    return ToolResult(f"{verb} {rel} ({len(content)} characters)", evidence)


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.bonsai-tmp")
    tmp.write_text(text, encoding="utf-8")
    if path.exists():
        os.chmod(tmp, path.stat().st_mode)
    else:  # the daemon's umask is private; a workspace file gets the user's own
        os.chmod(tmp, workspace_file_mode())
    os.replace(tmp, path)


PATH = {"type": "string", "description": "path relative to the workspace root"}

TOOLS = [
    Tool(
        "read_file",
        "Read a text file with line numbers. Use offset/limit (1-based lines) for large files.",
        schema(
            {
                "path": PATH,
                "offset": {"type": "integer"},
                "limit": {"type": "integer"},
                "fresh": {
                    "type": "boolean",
                    "description": "force real bytes, not a reuse pointer",
                },
            },
            ["path"],
        ),
        read_file,
    ),
    Tool("list_dir", "List a directory.", schema({"path": PATH}, []), list_dir),
    Tool(
        "edit_file",
        "Replace an exact string in a file. old_string must match exactly once "
        "(or pass replace_all).",
        schema(
            {
                "path": PATH,
                "old_string": {"type": "string"},
                "new_string": {"type": "string"},
                "replace_all": {"type": "boolean"},
            },
            ["path", "old_string", "new_string"],
        ),
        edit_file,
        needs_approval=True,
        preview=_edit_preview,
    ),
    Tool(
        "write_file",
        "Create or overwrite a file with the given content.",
        schema({"path": PATH, "content": {"type": "string"}}, ["path", "content"]),
        write_file,
        needs_approval=True,
        preview=_write_preview,
    ),
]
