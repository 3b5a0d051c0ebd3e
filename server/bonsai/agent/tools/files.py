"""read_file, list_dir, write_file, edit_file."""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import os
import stat
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
from bonsai.agent.tools.paths import workspace
from bonsai.domain import Evidence, content_hash
from bonsai.services.fs.atomic import write_at
from bonsai.services.fs.confined import Target, Workspace, read_fd
from bonsai.services.redaction import redact
from bonsai.shown_names import shown_name

DEFAULT_LINES = 2_000
MAX_LINE_CHARS = 2_000
MAX_LIST = 1_000


WHOLE_FILE_REDACTION_BYTES = 8 * 1024 * 1024  # larger files are redacted per window
MAX_EDIT_BYTES = 8 * 1024 * 1024  # larger files are refused by edit_file
MAX_LINE_BYTES = 64 * 1024  # of a line of a larger file, what is kept (the rest is hashed)


@dataclass(frozen=True)
class LinesRead:
    lines: list[str]
    total: int
    range_digest: str  # sha256 of the raw bytes of the lines returned
    file_digest: str  # sha256 of the whole file
    redacted: int = 0  # secrets replaced in the lines returned


def _read_lines(fd: int, name: str, offset: int, limit: int) -> LinesRead:
    """Lines offset..offset+limit-1 (1-based) and the file's line count, secrets
    redacted on the raw text before any decoration. Digests follow the stale-read
    convention of ``project_context.range_hash`` (raw bytes, endings kept).

    A file up to 8 MiB is redacted whole (a key block that starts before the
    window is still found; redaction keeps line counts, so numbers hold); a larger
    one is streamed and only its window is redacted."""
    whole, part = hashlib.sha256(), hashlib.sha256()
    raw_lines: list[bytes] = []
    total = 0
    with os.fdopen(fd, "rb") as handle:
        head = handle.read(8192)
        if b"\0" in head:
            size = os.fstat(handle.fileno()).st_size
            raise ToolFailure(f"{name} is a binary file ({size} bytes)")
        handle.seek(0)
        keep_all = os.fstat(handle.fileno()).st_size <= WHOLE_FILE_REDACTION_BYTES
        # a larger file is read in pieces: one line of gigabytes (a dump, a bundle,
        # a sparse file) is hashed whole, but only its first piece is kept
        piece = -1 if keep_all else MAX_LINE_BYTES
        while raw := handle.readline(piece):
            total += 1
            in_window = offset <= total < offset + limit
            kept = raw
            while True:
                whole.update(raw)
                if in_window:
                    part.update(raw)
                if raw.endswith(b"\n") or len(raw) < MAX_LINE_BYTES:
                    break
                raw = handle.readline(piece)
            if keep_all or in_window:
                raw_lines.append(kept if keep_all or kept.endswith(b"\n") else kept + b"\n")
    if keep_all:
        text = b"".join(raw_lines).decode("utf-8", errors="replace")
        cleaned = redact(text)
        lines = cleaned.text.splitlines()[offset - 1 : offset - 1 + limit]
        count = cleaned.count
    else:
        cleaned = redact(b"".join(raw_lines).decode("utf-8", errors="replace"))
        lines, count = cleaned.text.splitlines(), cleaned.count
    return LinesRead(
        [line[:MAX_LINE_CHARS] for line in lines], total, part.hexdigest(), whole.hexdigest(), count
    )


async def read_file(ctx: ToolContext, args: Args) -> ToolResult:
    raw = arg_str(args, "path")
    offset = max(1, arg_int(args, "offset", 1) or 1)
    limit = max(1, arg_int(args, "limit", DEFAULT_LINES) or DEFAULT_LINES)
    # off the event loop: a file of gigabytes takes seconds to hash
    return await asyncio.to_thread(_read_file, ctx.workspace, raw, offset, limit)


def _read_file(root: Path, raw: str, offset: int, limit: int) -> ToolResult:
    with workspace(root) as ws:
        fd, rel = _open_file(ws, raw)
        read = _read_lines(fd, rel, offset, limit)
    numbered = "\n".join(f"{offset + i:6}\t{line}" for i, line in enumerate(read.lines))
    end = offset + len(read.lines) - 1
    whole = offset == 1 and end >= read.total
    note = "" if whole else f"\n[lines {offset}-{end} of {read.total}]"
    evidence = Evidence(
        kind="read",
        path=rel,
        start_line=None if whole else offset,
        end_line=None if whole else end,
        content_hash=read.file_digest if whole else read.range_digest,
    )
    return ToolResult(numbered + note, evidence, redacted=read.redacted)


def _open_file(ws: Workspace, raw: str) -> tuple[int, str]:
    try:
        return ws.open_file(raw)
    except FileNotFoundError:
        raise ToolFailure(f"no such file: {raw}") from None
    except (IsADirectoryError, NotADirectoryError):
        raise ToolFailure(f"not a file: {raw}") from None


async def list_dir(ctx: ToolContext, args: Args) -> ToolResult:
    raw = arg_str(args, "path", required=False) or "."
    with workspace(ctx.workspace) as ws:
        try:
            fd, rel = ws.open_dir(raw)
        except (FileNotFoundError, NotADirectoryError):
            raise ToolFailure(f"not a directory: {raw}") from None
        try:
            shown, total, skipped = _entries(ws, fd, rel)
        finally:
            os.close(fd)
    more = f"\n[{total - MAX_LIST} more entries]" if total > MAX_LIST else ""
    note = (
        f"\n[{skipped} symbolic link(s) leading outside the workspace shown, not followed]"
        if skipped
        else ""
    )
    return ToolResult("\n".join(shown) + more + note, Evidence(kind="list", path=rel))


def _entries(ws: Workspace, fd: int, rel: str) -> tuple[list[str], int, int]:
    with os.scandir(fd) as it:
        entries = sorted(it, key=lambda e: e.name)
    shown: list[str] = []
    skipped = 0
    for entry in entries[:MAX_LIST]:
        name = shown_name(entry.name)
        if entry.is_symlink():
            if ws.link_inside(fd, entry.name, rel):
                shown.append(f"{name}@")
            else:
                skipped += 1
                shown.append(f"{name}@ [symbolic link out of the workspace; not followed]")
        else:
            shown.append(name + ("/" if entry.is_dir(follow_symlinks=False) else ""))
    return shown, len(entries), skipped


def _diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    return "".join(lines)


def _text_of(fd: int, rel: str) -> str:
    size = os.fstat(fd).st_size
    if size > MAX_EDIT_BYTES:  # read whole, diffed and held twice: a hostile file may be huge
        os.close(fd)
        raise ToolFailure(
            f"{rel} is {size:,} bytes; edit_file edits files up to {MAX_EDIT_BYTES:,} bytes "
            "(use bash, e.g. sed, for larger ones)"
        )
    try:
        return read_fd(fd).decode("utf-8")
    except UnicodeDecodeError:
        raise ToolFailure(f"{rel} is not UTF-8 text; refusing to edit it") from None


def _current_text(ws: Workspace, raw: str) -> str:
    """The file's text now, or "" when it does not exist yet."""
    try:
        fd, rel = ws.open_file(raw)
    except FileNotFoundError:
        return ""
    except IsADirectoryError:
        raise ToolFailure(f"{raw} is a directory") from None
    return _text_of(fd, rel)


def _edited(ws: Workspace, args: Args) -> tuple[Target, str, str]:
    """The edit's target (its directory open: the caller closes it), before and after."""
    raw = arg_str(args, "path")
    old, new = arg_str(args, "old_string"), arg_str(args, "new_string", required=False)
    fd, _ = _open_file(ws, raw)
    target = ws.target(raw)
    try:
        before = _text_of(fd, target.rel)
        count = before.count(old)
        if count == 0:
            raise ToolFailure("old_string was not found in the file; read it again and retry")
        if count > 1 and not args.get("replace_all"):
            raise ToolFailure(
                f"old_string matches {count} places; add surrounding lines to make it unique "
                "or pass replace_all: true"
            )
    except BaseException:
        target.close()
        raise
    return target, before, before.replace(old, new)


def _edit_preview(ctx: ToolContext, args: Args) -> str | None:
    with workspace(ctx.workspace) as ws:
        target, before, after = _edited(ws, args)
        target.close()
    return _diff(target.rel, before, after)


async def edit_file(ctx: ToolContext, args: Args) -> ToolResult:
    with workspace(ctx.workspace) as ws:
        target, before, after = _edited(ws, args)
        try:
            write_at(target.dir_fd, target.name, after.encode("utf-8"), mode=None)
        finally:
            target.close()
    rel = target.rel
    diff = _diff(rel, before, after)
    return ToolResult(
        f"edited {rel}\n{diff}", Evidence(kind="edit", path=rel, content_hash=content_hash(after))
    )


def _write_preview(ctx: ToolContext, args: Args) -> str | None:
    raw = arg_str(args, "path")
    content = arg_str(args, "content", required=False)
    with workspace(ctx.workspace) as ws:
        try:
            target = ws.target(raw)
        except (FileNotFoundError, NotADirectoryError):
            return _diff(raw, "", content)  # a new folder: nothing there yet
        target.close()
        return _diff(target.rel, _current_text(ws, raw), content)


def proposed_text(root: Path, tool: str, args: Args) -> str | None:
    """The whole text a file would have after this edit_file/write_file call (for a
    reviewer's diff editor); None for other tools. Raises like the tool would."""
    if tool not in ("edit_file", "write_file"):
        return None
    with workspace(root) as ws:
        if tool == "write_file":
            try:
                ws.target(arg_str(args, "path")).close()  # refuses a path outside the workspace
            except (FileNotFoundError, NotADirectoryError):
                pass  # a new folder: nothing there yet
            return arg_str(args, "content", required=False)
        target, _, after = _edited(ws, args)
        target.close()
    return after


async def write_file(ctx: ToolContext, args: Args) -> ToolResult:
    raw = arg_str(args, "path")
    content = arg_str(args, "content", required=False)
    with workspace(ctx.workspace) as ws:
        target = ws.target(raw, create_dirs=True)
        try:
            existed = _check_writable(target)
            write_at(target.dir_fd, target.name, content.encode("utf-8"), mode=None)
        finally:
            target.close()
    rel = target.rel
    verb = "overwrote" if existed else "created"
    evidence = Evidence(kind="write", path=rel, content_hash=content_hash(content))
    return ToolResult(f"{verb} {rel} ({len(content)} characters)", evidence)


def _check_writable(target: Target) -> bool:
    """Whether the target exists (as a regular file); refuses anything else."""
    if not target.name:
        raise ToolFailure("the workspace root is a directory, not a file")
    try:
        st = os.stat(target.name, dir_fd=target.dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(st.st_mode):
        raise ToolFailure(f"{target.rel} is a directory")
    if not stat.S_ISREG(st.st_mode):
        raise ToolFailure(f"{target.rel} is not a regular file; refused")
    return True


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
