"""Which tool outputs may become stubs, in which order, and why.

Superseded reads are found from typed evidence, never from tool names: a read
is superseded when a later read covers the same range of the same file, or
when the file is edited or written later. A read-reuse pointer carries no
bytes, so it supersedes nothing. Order: superseded reads first
(oldest first), then other bulky outputs, oldest first.
"""

from __future__ import annotations

from typing import NamedTuple

from bonsai.core.context.context_state import StubEntry, StubOrigin
from bonsai.core.context.pipeline_types import Item
from bonsai.core.context.reuse import REUSE_PREFIX
from bonsai.core.context.text import call_summary, stub_text
from bonsai.core.context.view import Node
from bonsai.domain import Evidence, Message


class Candidate(NamedTuple):
    node: Node
    reason: str
    superseded: bool


def superseded_reads(items: list[Item]) -> dict[str, str]:
    """Read item id → why a later item makes it redundant."""
    later_reads: dict[str, list[tuple[Evidence, str]]] = {}
    later_edit: dict[str, str] = {}
    out: dict[str, str] = {}
    for item in reversed(items):
        ev = item.message.evidence
        if item.message.role != "tool" or ev is None or ev.path is None or not ev.ok:
            continue
        if ev.kind in ("edit", "write"):
            later_edit[ev.path] = item.id
        elif ev.kind == "read":
            if item.message.content.startswith(REUSE_PREFIX):
                continue  # a reuse pointer carries no bytes: it supersedes nothing
            if ev.path in later_edit:
                out[item.id] = f"superseded: `{ev.path}` was changed later ({later_edit[ev.path]})"
            else:
                cover = next((i for e, i in later_reads.get(ev.path, []) if e.covers(ev)), None)
                if cover is not None:
                    out[item.id] = f"superseded: `{ev.path}` was read again later ({cover})"
            later_reads.setdefault(ev.path, []).append((ev, item.id))
    return out


def failed(message: Message) -> bool:
    ev = message.evidence
    return message.is_error or message.status != "complete" or (ev is not None and not ev.ok)


def stub_candidates(
    nodes: list[Node],
    protected: dict[str, str],
    superseded: dict[str, str],
    *,
    min_tokens: int,
    include_failed: bool,
) -> list[Candidate]:
    """Tool outputs that may be stubbed now, in stubbing order."""
    first: list[Candidate] = []
    rest: list[Candidate] = []
    for node in nodes:
        if node.state != "full" or node.full_tokens < min_tokens:
            continue
        item = node.item
        if item.message.role != "tool" or item.id in protected:
            continue
        why = superseded.get(item.id)
        if why is not None:
            first.append(Candidate(node, why, True))
        elif include_failed or not failed(item.message):
            rest.append(Candidate(node, "old tool output", False))
    return first + rest


def make_stub(
    item: Item,
    tokens_before: int,
    reason: str,
    origin: StubOrigin,
    turn: int,
    calls: dict[str, tuple[str, str]],
    *,
    size: str | None = None,
) -> StubEntry:
    """A stub for ``item``; ``calls`` maps tool call ids to (name, arguments);
    ``size`` overrides the "N tokens" the text quotes."""
    message = item.message
    name, args = calls.get(message.tool_call_id or "", (message.name or "tool", ""))
    if message.role == "tool":
        what = "output of " + call_summary(name, args, message.evidence)
    else:
        what = f"text of this {message.role} message"
    text = stub_text(
        what=what,
        size=size or f"{tokens_before:,} tokens",
        reason=reason,
        item_id=item.id,
        call_id=message.tool_call_id,
    )
    return StubEntry(
        text=text, reason=reason, origin=origin, tokens_before=tokens_before, turn=turn
    )
