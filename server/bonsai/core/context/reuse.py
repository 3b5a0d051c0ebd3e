"""Read reuse: a repeated read of unchanged bytes becomes a pointer to the earlier read.

Called at tool-execution time with the evidence of the read just performed (and,
when the caller has it, the text the read returned). Two kinds of repeat qualify:

- the same path and range with the same content hash;
- a narrower range inside an earlier read of the same path whose numbered lines
  (``cat -n`` or ``N:`` style) all appear, byte for byte, under the same numbers
  in that earlier read, and which is at least half as long as that read (the
  target of a pointer is protected from collection). This needs the result text.

Reads are annotated, never withheld: when the previous read of the same range
was already answered with a pointer, the model is asking again on purpose and
gets the real bytes; so does any explicit re-request. A pointer is only used
when it is shorter than the bytes it replaces.
"""

from __future__ import annotations

import re

from bonsai.core.context.context_state import ContextState
from bonsai.core.context.pipeline_types import Item
from bonsai.core.context.text import span
from bonsai.domain import Evidence

REUSE_PREFIX = "[reused previous read: "
_POINTER = re.compile(r"^\[reused previous read: ([^\]\s]+)\]")
# One numbered file line as read tools print it: `cat -n` ("    12\ttext") or
# a viewer window ("12:text", "12|text").
_NUMBERED = re.compile(r"^ *(\d+)(?:\t|:|\|)(.*)$")
# A pointer protects its target from collection. A narrower read becomes a
# pointer only when it is at least this share of the target's text, so that
# protecting the target keeps at most twice what the pointer saves (measured:
# pointers from small reads into big ones cost more than they saved).
NARROW_MIN_SHARE = 0.5


def pointer_text(target_id: str, evidence: Evidence, *, narrower: bool = False) -> str:
    why = "the same lines are in that read" if narrower else "same content hash"
    return (
        f"{REUSE_PREFIX}{target_id}] {span(evidence)} is unchanged since that read "
        f"({why}); its content is in message {target_id} above. "
        "Read it again to have the bytes sent anew."
    )


def pointer_target(content: str) -> str | None:
    """The item id a reuse pointer refers to, or ``None`` for any other text."""
    match = _POINTER.match(content)
    return match.group(1) if match else None


def numbered_lines(text: str) -> dict[int, str]:
    """Line number -> line text of every numbered line of a read's output."""
    out: dict[int, str] = {}
    for line in text.split("\n"):
        match = _NUMBERED.match(line)
        if match:
            out[int(match.group(1))] = match.group(2)
    return out


def lines_inside(narrow: str, wide: str) -> bool:
    """True when ``narrow`` shows numbered lines and every one of them appears
    with the same number and the same text in ``wide``."""
    shown = numbered_lines(narrow)
    if not shown:
        return False
    known = numbered_lines(wide)
    return all(known.get(number) == line for number, line in shown.items())


def _worth_protecting(narrow: str, wide: str) -> bool:
    return len(narrow) >= NARROW_MIN_SHARE * len(wide)


def _same_range(a: Evidence, b: Evidence) -> bool:
    return a.path == b.path and a.start_line == b.start_line and a.end_line == b.end_line


def _inactive(state: ContextState | None) -> frozenset[str]:
    if state is None:
        return frozenset()
    return frozenset(state.stubs) | frozenset(state.drops) | state.folded()


def _asked_again(item: Item, by_id: dict[str, Item], evidence: Evidence) -> bool:
    """``item`` is a pointer answering the same range as ``evidence`` (its own
    range, or its target's for an identical repeat)."""
    own = item.message.evidence
    if own is not None and _same_range(own, evidence):
        return True
    target = by_id.get(pointer_target(item.message.content) or "")
    pointed = target.message.evidence if target else None
    return pointed is not None and _same_range(pointed, evidence)


def read_reuse(
    items: list[Item],
    evidence: Evidence,
    *,
    explicit: bool,
    state: ContextState | None = None,
    text: str | None = None,
) -> str | None:
    """A pointer text when an earlier read still in the context returned the same
    bytes; ``None`` means: return the real bytes.

    ``state`` (optional) tells which earlier reads are no longer in the context
    (stubbed, dropped or folded); those never serve as a pointer target.
    ``text`` (optional) is what the read returned: with it, a narrower read
    inside an earlier one can be a pointer too, and no pointer is used that
    would be longer than the bytes."""
    if explicit or evidence.kind != "read" or not evidence.ok:
        return None
    if not evidence.path or not evidence.content_hash:
        return None
    pointer = _find(items, evidence, _inactive(state), text)
    if pointer is None or (text is not None and len(pointer) >= len(text)):
        return None
    return pointer


def _find(
    items: list[Item], evidence: Evidence, gone: frozenset[str], text: str | None
) -> str | None:
    by_id = {item.id: item for item in items}
    for item in reversed(items):
        if item.message.role != "tool":
            continue
        if pointer_target(item.message.content) is not None:
            if _asked_again(item, by_id, evidence):
                return None  # asked again right after a pointer: send the bytes
            continue
        earlier = item.message.evidence
        if earlier is None or earlier.kind != "read" or not earlier.ok:
            continue
        if _same_range(earlier, evidence):
            if earlier.content_hash != evidence.content_hash or item.id in gone:
                return None
            return pointer_text(item.id, evidence)
        if text is None or item.id in gone or not earlier.covers(evidence):
            continue
        if _worth_protecting(text, item.message.content) and lines_inside(
            text, item.message.content
        ):
            return pointer_text(item.id, evidence, narrower=True)
    return None
