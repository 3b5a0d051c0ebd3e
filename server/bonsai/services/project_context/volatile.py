"""The volatile tail: git state against the session baseline, stale reads, peers,
and the guidance that may change between turns (the user's rules, the
retrieval hint).

It always starts with ``## Volatile state`` (providers split their cache on
that heading) and is never part of the cacheable prefix.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from bonsai.core.context import VOLATILE_HEADING, VOLATILE_ID, SystemPart
from bonsai.core.turn.rules import rules_block
from bonsai.domain import Evidence
from bonsai.services.fs.untrusted import regular_bytes
from bonsai.services.project_context.git import (
    GitBaseline,
    GitError,
    git_root,
    read_status,
)
from bonsai.shown_names import shown_name

MAX_LISTED = 30


def range_hash(path: Path, start_line: int | None, end_line: int | None) -> str | None:
    """sha256 of a file's bytes, or of lines ``start_line..end_line`` (1-based,
    inclusive, line endings kept): the convention read evidence must follow for
    the stale-read advisory. ``None`` when the file cannot be read or is no
    longer a regular file (a FIFO or ``/dev/zero`` planted since is never read)."""
    data = regular_bytes(path)
    if data is None:
        return None
    if start_line is None and end_line is None:
        return hashlib.sha256(data).hexdigest()
    lines = data.splitlines(keepends=True)
    lo = max(1, start_line or 1)
    hi = len(lines) if end_line is None else end_line
    return hashlib.sha256(b"".join(lines[lo - 1 : hi])).hexdigest()


def _listed(entries: list[str]) -> list[str]:
    shown = [f"- {e}" for e in entries[:MAX_LISTED]]
    if len(entries) > MAX_LISTED:
        shown.append(f"- … and {len(entries) - MAX_LISTED:,} more")
    return shown


def git_lines(workspace: Path, baseline: GitBaseline | None) -> list[str]:
    root = git_root(workspace)
    if root is None:
        return ["Git: not a git repository."]
    try:
        status = read_status(root)
    except GitError as exc:
        return [f"Git: status unavailable: {exc}."]
    where = f"branch `{status.branch}` at {status.head}" if status.head else "no commits yet"
    entries = status.entries
    before = baseline.changes if baseline is not None else {}
    ours: list[str] = []
    theirs: list[str] = []
    for code, path in entries:
        line = f"{code.strip() or '?'} {shown_name(path)}"
        if baseline is not None and baseline.unchanged(root, path):
            theirs.append(line)
        else:
            ours.append(line)
    now = {path for _, path in entries}
    ours += [f"restored {shown_name(path)}" for path in sorted(before) if path not in now]
    lines = [f"Git: {where}."]
    if baseline is None:
        lines.append("Changed files (no session baseline was taken):")
        return lines + (_listed(ours) or ["- none"])
    lines.append("Changed in this session:")
    lines += _listed(ours) or ["- none"]
    if theirs:
        lines.append("Already changed when the session started (not this session's work):")
        lines += _listed(theirs)
    if baseline.note:
        lines.append(f"Baseline note: {baseline.note}.")
    return lines


def stale_lines(workspace: Path, reads: list[Evidence]) -> list[str]:
    """Files read earlier whose bytes on disk no longer match what the read returned."""
    latest: dict[tuple[str, int | None, int | None], Evidence] = {}
    for ev in reads:
        if ev.kind == "read" and ev.ok and ev.path and ev.content_hash:
            latest[(ev.path, ev.start_line, ev.end_line)] = ev
    stale: list[str] = []
    for (path, lo, hi), ev in sorted(latest.items(), key=lambda kv: str(kv[0])):
        now = range_hash(workspace / path, lo, hi)
        if now != ev.content_hash:
            where = "" if lo is None and hi is None else f" lines {lo or 1}-{hi or 'end'}"
            why = " (deleted or unreadable)" if now is None else ""
            stale.append(f"{shown_name(path)}{where}{why}")
    if not stale:
        return ["Stale reads: none."]
    return [
        "Stale reads (changed on disk since you read them; read again before relying on them):",
        *_listed(stale),
    ]


def peer_lines(peers: list[str]) -> list[str]:
    if not peers:
        return ["Other clients attached: none."]
    return [f"Other clients attached: {', '.join(sorted(peers))}."]


def volatile_part(
    workspace: Path, baseline: GitBaseline | None, reads: list[Evidence], peers: list[str]
) -> SystemPart:
    lines = [
        VOLATILE_HEADING,
        *git_lines(workspace, baseline),
        *stale_lines(workspace, reads),
        *peer_lines(peers),
    ]
    return SystemPart(
        id=VOLATILE_ID, label="volatile state", text="\n".join(lines), cacheable=False
    )


RETRIEVAL_HINT = (
    "Retrieval: earlier parts of this conversation may be folded or archived; call `recall` "
    "to fetch their exact text. An excerpt or a card is not the original: fetch the full "
    "text before relying on code, numbers or exact wording."
)


def with_guidance(parts: list[SystemPart], rules: list[str], hint: bool) -> list[SystemPart]:
    """Add the ``Rules:`` block and the retrieval hint to the end of the volatile
    tail. They live here, never in the cacheable prefix, so editing a rule or
    crossing the hint threshold costs no cache."""
    lines = rules_block(rules) + ([RETRIEVAL_HINT] if hint else [])
    if not lines:
        return parts
    out = []
    for part in parts:
        if part.id == VOLATILE_ID:
            part = part.model_copy(update={"text": "\n".join([part.text, *lines])})
        out.append(part)
    return out
