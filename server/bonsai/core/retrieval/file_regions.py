"""File regions: the current text of files a session read, served with retrieval.

A search hit is history; the file it came from may have changed since. So
retrieval also returns, for the files this session read (typed ``read``
evidence on its tool results) that relate to the question, the text those
lines hold *now*, clearly labelled as current. Modes (``retrieval.file_region``):

- ``auto``: the whole region when it fits ``excerpt_above`` tokens, its head otherwise;
- ``digest``: the head only;
- ``full``: the whole region, always;
- ``off``: no file regions.

Reading the disk is the caller's; this module picks, scores and renders.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from bonsai.core.retrieval.long_content import Count, Limits, matching_terms, question_stems
from bonsai.domain import StoredMessage

T = TypeVar("T")
Mode = Literal["auto", "digest", "full", "off"]
MAX_REGIONS = 3
HIT_BONUS = 3  # the read's own result was a search hit
PATH_WEIGHT = 2  # a question word in the path counts double


@dataclass(frozen=True)
class ReadRegion:
    """The latest read of one file: its 1-based inclusive range (None: whole file)."""

    path: str
    start: int | None
    end: int | None
    content_hash: str | None  # of the bytes that read returned
    message_id: str
    seq: int


@dataclass(frozen=True)
class CurrentText:
    """What the region's lines hold on disk now (``None``: the file is gone)."""

    lines: list[str] | None  # the region's lines, without line endings
    first: int = 1  # the number of the first of them
    total_lines: int = 0  # of the whole file
    changed: bool | None = None  # against the read's hash; None when unknown


def read_regions(history: Sequence[StoredMessage]) -> list[ReadRegion]:
    """One region per file the session read successfully: its latest read."""
    latest: dict[str, ReadRegion] = {}
    for stored in history:
        evidence = stored.message.evidence
        if evidence is None or evidence.kind != "read" or not evidence.ok or not evidence.path:
            continue
        if stored.message.is_error:
            continue
        latest.pop(evidence.path, None)
        latest[evidence.path] = ReadRegion(
            evidence.path,
            evidence.start_line,
            evidence.end_line,
            evidence.content_hash,
            stored.message_id,
            stored.seq,
        )
    return list(latest.values())


def related_regions(
    regions: Sequence[ReadRegion],
    query: str,
    hit_ids: Collection[str],
    texts: Mapping[str, str],
    limit: int = MAX_REGIONS,
) -> list[ReadRegion]:
    """The regions that relate to ``query``, best first: their read was a hit, the
    question's words are in their path, or in their current text."""
    stems = question_stems(query)

    def score(region: ReadRegion) -> int:
        value = HIT_BONUS if region.message_id in hit_ids else 0
        value += PATH_WEIGHT * matching_terms(region.path, stems)
        return value + matching_terms(texts.get(region.path, ""), stems)

    ranked = sorted(((score(r), r) for r in regions), key=lambda p: (-p[0], -p[1].seq))
    return [region for value, region in ranked if value > 0][:limit]


def region_lines(region: ReadRegion, all_lines: Sequence[T]) -> tuple[int, list[T]]:
    """The first line number and the lines of ``region`` within the file now."""
    start = max(1, region.start or 1)
    end = region.end if region.end is not None else len(all_lines)
    return start, list(all_lines[start - 1 : min(end, len(all_lines))])


def render_region(
    region: ReadRegion, current: CurrentText, mode: Mode, count: Count, limits: Limits
) -> str:
    """One region as the model sees it: a label saying it is today's text, then
    the numbered lines (all of them, or the head with how to read the rest)."""
    if current.lines is None:
        return f"[current file {region.path}: it no longer exists (the session read it earlier)]"
    first, lines = current.first, current.lines
    numbered = [f"{first + i:6}\t{line}" for i, line in enumerate(lines)]
    whole = "\n".join(numbered)
    shown = numbered
    if mode == "digest" or (mode == "auto" and count(whole) > limits.excerpt_above):
        shown = _head(numbered, limits.excerpt_above // 2, count)
    last = first + len(lines) - 1
    state = {True: "changed", False: "unchanged", None: "maybe changed"}[current.changed]
    label = (
        f"[current text of {region.path}, lines {first}-{last} of {current.total_lines}, "
        f"read from disk now ({state} since this session read it); "
        "today's file, not the historic read]"
    )
    body = "\n".join(shown)
    if len(shown) < len(numbered):
        resume = first + len(shown)
        body += (
            f"\n[head only: {len(shown)} of {len(lines)} lines; "
            f'read_file {{"path": "{region.path}", "offset": {resume}}} for the rest]'
        )
    return f"{label}\n{body}"


def _head(lines: list[str], budget: int, count: Count) -> list[str]:
    out: list[str] = []
    used = 0
    for line in lines:
        size = count(line + "\n")
        if out and used + size > budget:
            break
        out.append(line)
        used += size
    return out
