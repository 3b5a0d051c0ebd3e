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
from bonsai.core.context.prefix import prefix_hash
from bonsai.core.context.pricing import Pricing, family_rule
from bonsai.core.context.protect import protected_ids
from bonsai.core.context.supersede import superseded_of
from bonsai.core.context.view import (
    Node,
    build_nodes,
    conversation,
    first_folded_seq,
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
        memo = self.inp.memo
        pos = summary_position(self.nodes, self.state)
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

    def fresh_tokens(self) -> int:
        """Tokens of the messages the previous model call did not send: the latest
        assistant message and everything after it (its tool results, a new user
        message). They reach the provider uncached with or without a rewrite, so a
        rewrite's cost is what it re-sends *besides* them."""
        roles = [n.item.message.role for n in self.nodes]
        if "assistant" not in roles:
            return 0
        last = len(roles) - 1 - roles[::-1].index("assistant")
        return sum(n.tokens for n in self.nodes[last:])

    def tokens_before(self, node_ids: set[str], *, summary_changes: bool = False) -> int:
        """Tokens sent ahead of the first of ``node_ids`` (what a rewrite there keeps
        cached); with ``summary_changes``, the current summary counts as changed too."""
        total = self.frame.system_tokens + self.frame.tools_tokens
        pos = summary_position(self.nodes, self.state)
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
    alone (groups, tool calls, superseded reads) are reused."""
    frame = build_frame(inp.parts, tools, state, inp.settings, inp.family, inp.counter)
    same = like if like is not None and like.inp is inp else None
    groups = same.groups if same is not None else group_items(inp.items)
    nodes = build_nodes(inp.items, state, inp.counter, inp.memo)
    summary_tokens = 0
    if state.summary is not None and summary_position(nodes, state) is not None:
        first = first_folded_seq(nodes, state)
        summary_tokens = inp.counter.count_message(summary_message(state.summary, first)).tokens
    superseded = same.superseded if same is not None else superseded_of(inp.items, inp.memo)
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
    )
