"""Read reuse: a repeated read of unchanged bytes becomes a pointer to the earlier read.

Called at tool-execution time with the evidence of the read just performed.
Reads are annotated, never withheld: when the previous read of the same range
was already answered with a pointer, the model is asking again on purpose and
gets the real bytes; so does any explicit re-request.
"""

from __future__ import annotations

import re

from bonsai.core.context.models import Item
from bonsai.core.context.state import ContextState
from bonsai.core.context.text import span
from bonsai.domain import Evidence

REUSE_PREFIX = "[reused previous read: "
_POINTER = re.compile(r"^\[reused previous read: ([^\]\s]+)\]")


def pointer_text(target_id: str, evidence: Evidence) -> str:
    return (
        f"{REUSE_PREFIX}{target_id}] {span(evidence)} is unchanged since that read "
        f"(same content hash); its content is in message {target_id} above. "
        "Read it again to have the bytes sent anew."
    )


def pointer_target(content: str) -> str | None:
    """The item id a reuse pointer refers to, or ``None`` for any other text."""
    match = _POINTER.match(content)
    return match.group(1) if match else None


def _same_range(a: Evidence, b: Evidence) -> bool:
    return a.path == b.path and a.start_line == b.start_line and a.end_line == b.end_line


def _inactive(state: ContextState | None) -> frozenset[str]:
    if state is None:
        return frozenset()
    return frozenset(state.stubs) | frozenset(state.drops) | state.folded()


def read_reuse(
    items: list[Item], evidence: Evidence, *, explicit: bool, state: ContextState | None = None
) -> str | None:
    """A pointer text when an earlier read still in the context returned the same
    path, range and content hash; ``None`` means: return the real bytes.

    ``state`` (optional) tells which earlier reads are no longer in the context
    (stubbed, dropped or folded); those never serve as a pointer target."""
    if explicit or evidence.kind != "read" or not evidence.ok:
        return None
    if not evidence.path or not evidence.content_hash:
        return None
    gone = _inactive(state)
    by_id = {item.id: item for item in items}
    for item in reversed(items):
        if item.message.role != "tool":
            continue
        target = pointer_target(item.message.content)
        if target is not None:
            pointed = by_id.get(target)
            pointed_ev = pointed.message.evidence if pointed else None
            if pointed_ev is not None and _same_range(pointed_ev, evidence):
                return None  # asked again right after a pointer: send the bytes
            continue
        earlier = item.message.evidence
        if earlier is None or earlier.kind != "read" or not earlier.ok:
            continue
        if not _same_range(earlier, evidence):
            continue
        if earlier.content_hash != evidence.content_hash or item.id in gone:
            return None
        return pointer_text(item.id, evidence)
    return None
