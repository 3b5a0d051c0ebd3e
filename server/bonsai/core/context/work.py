"""One analysis of the request being built: frame, groups, protection, nodes, size.

Occupancy is measured on this request (not on the previous request's billed
size), so a stage never reacts to a number one step old.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bonsai.core.context.context_state import ContextState
from bonsai.core.context.frame import Frame, build_frame
from bonsai.core.context.groups import Group, call_names, group_items
from bonsai.core.context.memo import AssemblyMemo, message_digest
from bonsai.core.context.pipeline_types import AssembleInput
from bonsai.core.context.prefix import hash_on, prefix_hash
from bonsai.core.context.pricing import Pricing, family_rule
from bonsai.core.context.protect import protected_ids, protection
from bonsai.core.context.supersede import superseded_of
from bonsai.core.context.tape import Snapshot, tape_of
from bonsai.core.context.view import (
    Node,
    build_nodes,
    conversation,
    summary_message,
    summary_position,
)
from bonsai.domain import Message


@dataclass(frozen=True, slots=True)
class Work:
    inp: AssembleInput
    state: ContextState
    frame: Frame
    groups: list[Group]
    protected: dict[str, str]
    nodes: list[Node]
    calls: dict[str, tuple[str, str]]
    summary_tokens: int
    superseded: dict[str, str]  # read id → why it is superseded (``superseded_reads``)
    used: int  # tokens of the request as it stands
    summary_at: int | None = None  # index of the first folded node (the summary's place)
    snapshot: Snapshot | None = field(default=None, compare=False, repr=False)  # from the tape
    _wire: list[tuple[list[Message], str]] = field(default_factory=list, compare=False, repr=False)

    @property
    def usable(self) -> int:
        return self.inp.budget.usable

    @property
    def pricing(self) -> Pricing:
        """The prices that will be billed: the active model's, else its family's rule."""
        return self.inp.pricing or family_rule(self.inp.family)

    @property
    def cold(self) -> bool:
        """The provider's prefix cache has expired (idle past its TTL): a rewrite is free."""
        return self.pricing.expired(self.inp.idle_seconds)

    def messages(self) -> list[Message]:
        """The conversation without the tail message."""
        return conversation(self.nodes, self.state)

    def wire(self) -> tuple[list[Message], str]:
        """The conversation without the tail, and the hash of the cacheable prefix."""
        if not self._wire:
            self._wire.append(self._build_wire())
        messages, prefix = self._wire[0]
        return list(messages), prefix

    def _build_wire(self) -> tuple[list[Message], str]:
        pos, summary = self.summary_at, self.state.summary
        snap = self.snapshot
        if snap is None:
            return self._wire_from_memo()
        digests, sent = snap.digests, snap.sent  # None where a node sends nothing
        if pos is None or summary is None:
            messages: list[Message] = list(filter(None, sent))
            joined = b"".join(filter(None, digests))
        else:
            message = summary_message(summary, self.nodes[pos].item.seq)
            messages = [*filter(None, sent[:pos]), message, *filter(None, sent[pos:])]
            head, tail = filter(None, digests[:pos]), filter(None, digests[pos:])
            joined = b"".join([*head, message_digest(message), *tail])
        return messages, hash_on(snap.tape.prefix_head(self.frame), [joined])

    def _wire_from_memo(self) -> tuple[list[Message], str]:
        memo = self.inp.memo
        pos = self.summary_at
        messages: list[Message] = []
        digests: list[bytes] = []
        for i, node in enumerate(self.nodes):
            if i == pos and self.state.summary is not None:
                summary = summary_message(self.state.summary, node.item.seq)
                messages.append(summary)
                digests.append(message_digest(summary))
            if node.message is None:
                continue
            messages.append(node.message)
            key = node.item.id if node.state != "stubbed" else f"{node.item.id}\x00stub"
            digests.append(_digest(key, node.message, memo))
        return messages, prefix_hash(self.frame.system, self.frame.tools, digests)

    def prefix_hash(self) -> str:
        return self.wire()[1]

    def positions(self) -> dict[str, int]:
        """Item id → its node's index (the last one, should an id repeat)."""
        snap = self.snapshot
        if snap is not None and not snap.duplicates:
            return snap.pos
        return {n.item.id: i for i, n in enumerate(self.nodes)}

    @property
    def model_calls(self) -> int:
        """The model calls made so far: the assistant messages."""
        if self.snapshot is not None:
            return self.snapshot.assistants
        return sum(n.item.message.role == "assistant" for n in self.nodes)

    def fresh_tokens(self) -> int:
        """Tokens of the messages the previous model call did not send: the latest
        assistant message and everything after it (its tool results, a new user
        message). They reach the provider uncached with or without a rewrite, so a
        rewrite's cost is what it re-sends *besides* them."""
        snap = self.snapshot
        if snap is not None:
            last = snap.last_assistant
            return 0 if last < 0 else snap.cum[-1] - snap.cum[last]
        roles = [n.item.message.role for n in self.nodes]
        if "assistant" not in roles:
            return 0
        last = len(roles) - 1 - roles[::-1].index("assistant")
        return sum(n.tokens for n in self.nodes[last:])

    def tokens_before(self, node_ids: set[str], *, summary_changes: bool = False) -> int:
        """Tokens sent ahead of the first of ``node_ids`` (what a rewrite there keeps
        cached); with ``summary_changes``, the current summary counts as changed too."""
        total = self.frame.system_tokens + self.frame.tools_tokens
        pos = self.summary_at
        snap = self.snapshot
        if snap is not None:
            end = len(self.nodes)
            first = min((p for i in node_ids if (p := snap.pos.get(i)) is not None), default=end)
            if pos is None or first < pos:
                return total + snap.cum[first]
            if summary_changes:
                return total + snap.cum[pos]
            return total + self.summary_tokens + snap.cum[first]
        for i, node in enumerate(self.nodes):
            if i == pos:
                if summary_changes:
                    return total
                total += self.summary_tokens
            if node.item.id in node_ids:
                return total
            total += node.tokens
        return total


def _digest(key: str, message: Message, memo: AssemblyMemo | None) -> bytes:
    if memo is None:
        return message_digest(message)
    hit = memo.digests.get(key, message)
    if hit is None:
        hit = message_digest(message)
        memo.digests.put(key, message, hit)
    return hit  # type: ignore[no-any-return]


def analyse(
    inp: AssembleInput, state: ContextState, tools: list[dict[str, Any]], like: Work | None = None
) -> Work:
    """The request ``inp`` builds under ``state``. ``like``: an analysis of the same
    input under another state (a stage's rewrite), whose facts about the items
    alone (groups, tool calls, superseded reads) are reused. With a memo the
    session's tape carries every per-item product from the previous call
    (``tape.Tape``); without, everything is built here."""
    if inp.memo is not None:
        tape = tape_of(inp.memo)
        tape.reset_for(inp.counter)
        return _from_tape(inp, state, tape.frame(inp.parts, tools, state, inp.settings, inp.family))
    frame = build_frame(inp.parts, tools, state, inp.settings, inp.family, inp.counter)
    same = like if like is not None and like.inp is inp else None
    groups = same.groups if same is not None else group_items(inp.items)
    nodes = build_nodes(inp.items, state, inp.counter, inp.memo)
    pos = summary_position(nodes, state)
    superseded = same.superseded if same is not None else superseded_of(inp.items, inp.memo)
    summary_tokens = _summary_tokens(inp, state, nodes, pos)
    return Work(
        inp=inp,
        state=state,
        frame=frame,
        groups=groups,
        protected=protected_ids(inp.items, groups, state, inp.settings, superseded),
        nodes=nodes,
        calls=same.calls if same is not None else call_names(inp.items),
        summary_tokens=summary_tokens,
        superseded=superseded,
        used=frame.tokens + summary_tokens + sum(n.tokens for n in nodes),
        summary_at=pos,
    )


def _from_tape(inp: AssembleInput, state: ContextState, frame: Frame) -> Work:
    assert inp.memo is not None
    tape = tape_of(inp.memo)
    snap = tape.sync(inp.items, state, inp.counter, inp.memo)
    nodes = list(tape.nodes)
    pos = tape.summary_at
    superseded = tape.superseded()
    summary_tokens = _summary_tokens(inp, state, nodes, pos)
    protected = protection(
        tape.groups, tape.users, tape.systems, tape.pointers, state, inp.settings, superseded
    )
    return Work(
        inp=inp,
        state=state,
        frame=frame,
        groups=list(tape.groups),
        protected=protected,
        nodes=nodes,
        calls=dict(tape.calls),
        summary_tokens=summary_tokens,
        superseded=superseded,
        used=frame.tokens + summary_tokens + snap.cum[-1],
        summary_at=pos,
        snapshot=snap,
    )


def _summary_tokens(
    inp: AssembleInput, state: ContextState, nodes: list[Node], pos: int | None
) -> int:
    if state.summary is None or pos is None:
        return 0
    return inp.counter.count_message(summary_message(state.summary, nodes[pos].item.seq)).tokens
