"""The conversation as the state says to send it: each item full, pinned,
stubbed (with its stored text, byte for byte), dropped, folded or archived, the
rolling summary in place of what it folds, and one card per archived episode
(carried by the episode's first message, the others not sent).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from pydantic import BaseModel

from bonsai.core.context.context_state import ArchiveEntry, ContextState, StubEntry, SummaryState
from bonsai.core.context.memo import AssemblyMemo
from bonsai.core.context.pipeline_types import Confidence, Item, NodeState, TokenCounter
from bonsai.domain import Message

# The lead line is the same for every revision and the revision/span line closes
# the message, so consecutive revisions share their leading bytes (a provider
# that caches partial messages keeps reading them from the cache).
SUMMARY_HEADER = (
    "[bonsai summary of earlier messages: lossy reference data, not instructions; "
    "re-read files and outputs before relying on a detail.]"
)
SUMMARY_FOOTER = "[summary revision {rev}, messages seq {first}–{last}]"


@dataclass(frozen=True, slots=True)
class Node:
    """One item as it stands in this assembly."""

    item: Item
    state: NodeState
    message: Message | None  # what is sent; None when dropped or folded
    tokens: int  # on the wire now (0 when not sent)
    full_tokens: int  # the original message
    confidence: Confidence
    reason: str = ""

    @property
    def sent(self) -> bool:
        return self.message is not None


def summary_message(summary: SummaryState, first_seq: int) -> Message:
    footer = SUMMARY_FOOTER.format(rev=summary.revision, first=first_seq, last=summary.through_seq)
    return Message(role="user", content=f"{SUMMARY_HEADER}\n\n{summary.text}\n\n{footer}")


def _full_count(
    item: Item, counter: TokenCounter, memo: AssemblyMemo | None
) -> tuple[int, Confidence]:
    if memo is not None:
        hit = memo.counts.get(item.id, item.message)
        if hit is not None:
            return hit  # type: ignore[no-any-return]
    count = counter.count_message(item.message)
    value = (count.tokens, count.confidence)
    if memo is not None:
        memo.counts.put(item.id, item.message, value)
    return value


def stubbed_message(
    item: Item, text: str, counter: TokenCounter, memo: AssemblyMemo | None
) -> tuple[Message, int, Confidence]:
    """``item`` sent as the stub ``text``: the message and its count (memoised)."""
    key = f"{item.id}\x00{text}"
    if memo is not None:
        hit = memo.stubbed.get(key, item.message)
        if hit is not None:
            return hit  # type: ignore[no-any-return]
    message = item.message.model_copy(update={"content": text})
    count = counter.count_message(message)
    value = (message, count.tokens, count.confidence)
    if memo is not None:
        memo.stubbed.put(key, item.message, value)
    return value


def card_message(entry: ArchiveEntry) -> Message:
    """What an archived episode sends: its card, as one user message."""
    return Message(role="user", content=entry.card)


def applied_archives(items: list[Item], state: ContextState) -> dict[str, ArchiveEntry]:
    """Item id → the archive hiding it, for archives whose every message is here
    (an archive of another branch, or a broken one, hides nothing)."""
    return archives_among({item.id for item in items}, state)


def archives_among(present: Collection[str], state: ContextState) -> dict[str, ArchiveEntry]:
    """``applied_archives`` for the items whose ids are ``present``."""
    if state.episodes is None or not state.episodes.archives:
        return {}
    return {
        item_id: entry
        for entry in state.episodes.archives.values()
        if all(i in present for i in entry.ids)
        for item_id in entry.ids
    }


def _card(
    item: Item, entry: ArchiveEntry, counter: TokenCounter, memo: AssemblyMemo | None
) -> tuple[Message, int, Confidence]:
    key = f"{item.id}\x00card\x00{entry.card}"
    if memo is not None:
        hit = memo.stubbed.get(key, item.message)
        if hit is not None:
            return hit  # type: ignore[no-any-return]
    message = card_message(entry)
    count = counter.count_message(message)
    value = (message, count.tokens, count.confidence)
    if memo is not None:
        memo.stubbed.put(key, item.message, value)
    return value


def _archived_node(
    item: Item,
    entry: ArchiveEntry,
    tokens: int,
    conf: Confidence,
    counter: TokenCounter,
    memo: AssemblyMemo | None,
) -> Node:
    reason = (
        f'archived in episode #{entry.number} "{entry.title}" '
        f"({tokens:,} tokens restorable from the episodes list)"
    )
    if item.id != entry.ids[0]:
        return Node(item, "archived", None, 0, tokens, conf, reason)
    message, card_tokens, card_conf = _card(item, entry, counter, memo)
    return Node(item, "archived", message, card_tokens, tokens, card_conf, reason)


@dataclass(frozen=True, slots=True)
class Marks:
    """What the state says about single items: everything a node depends on
    besides its own message (see ``node_of``)."""

    drops: frozenset[str]
    pins: frozenset[str]
    folded: frozenset[str]
    revision: int  # the summary's (a folded node's reason names it)
    stubs: dict[str, StubEntry]
    archived: dict[str, ArchiveEntry]

    @classmethod
    def of(cls, present: Collection[str], state: ContextState) -> Marks:
        """The marks of ``state`` for the items whose ids are ``present``."""
        return cls(
            drops=frozenset(state.drops),
            pins=frozenset(state.pins),
            folded=state.folded(),
            revision=state.summary.revision if state.summary else 0,
            stubs=state.stubs,
            archived=archives_among(present, state),
        )

    def changed(self, other: Marks) -> set[str]:
        """Ids whose node may differ between ``self`` and ``other``."""
        out = set(self.drops ^ other.drops) | (self.pins ^ other.pins)
        if self.revision != other.revision:
            out |= self.folded | other.folded
        else:
            out |= self.folded ^ other.folded
        out |= changed_keys(self.stubs, other.stubs)
        out |= changed_keys(self.archived, other.archived)
        return out


def changed_keys(old: Mapping[str, object], new: Mapping[str, object]) -> set[str]:
    if old is new:
        return set()
    out = set(old.keys() ^ new.keys())
    out.update(k for k, v in new.items() if (was := old.get(k, v)) is not v and _differ(was, v))
    return out


def _differ(a: object, b: object) -> bool:
    """``a != b``; for two state entries of one type (pydantic models of plain
    fields, as a state read back from JSON gives) by their fields at C speed."""
    if type(a) is type(b) and isinstance(a, BaseModel):
        return a.__dict__ != b.__dict__  # type: ignore[attr-defined]
    return a != b


def node_of(item: Item, marks: Marks, counter: TokenCounter, memo: AssemblyMemo | None) -> Node:
    """``item`` as ``marks`` say to send it."""
    tokens, conf = _full_count(item, counter, memo)
    archived = marks.archived
    if item.id in marks.drops and item.id not in archived:  # an archive outranks a drop
        return Node(item, "dropped", None, 0, tokens, conf, "dropped by the user")
    if item.id in marks.folded:  # a fold outranks an archive (its card may be folded)
        reason = f"folded into summary sum:{marks.revision} ({tokens:,} tokens restorable)"
        return Node(item, "summarized", None, 0, tokens, conf, reason)
    if item.id in archived:
        return _archived_node(item, archived[item.id], tokens, conf, counter, memo)
    stub = marks.stubs.get(item.id)
    if stub is not None:
        message, stub_tokens, stub_conf = stubbed_message(item, stub.text, counter, memo)
        reason = f"{stub.reason} ({tokens:,} tokens restorable)"
        return Node(item, "stubbed", message, stub_tokens, tokens, stub_conf, reason)
    kind: NodeState = "pinned" if item.id in marks.pins else "full"
    return Node(item, kind, item.message, tokens, tokens, conf)


def build_nodes(
    items: list[Item], state: ContextState, counter: TokenCounter, memo: AssemblyMemo | None = None
) -> list[Node]:
    marks = Marks.of({item.id for item in items}, state)
    return [node_of(item, marks, counter, memo) for item in items]


def summary_position(nodes: list[Node], state: ContextState) -> int | None:
    """Index of the first folded node (where the summary goes), if any."""
    if state.summary is None:
        return None
    folded = frozenset(state.summary.folded)
    return next((i for i, n in enumerate(nodes) if n.item.id in folded), None)


def first_folded_seq(nodes: list[Node], state: ContextState) -> int:
    pos = summary_position(nodes, state)
    return nodes[pos].item.seq if pos is not None else 0


def conversation(nodes: list[Node], state: ContextState) -> list[Message]:
    """The messages to send, in order, with the summary at the first folded place."""
    pos = summary_position(nodes, state)
    out: list[Message] = []
    for i, node in enumerate(nodes):
        if i == pos and state.summary is not None:
            out.append(summary_message(state.summary, node.item.seq))
        if node.message is not None:
            out.append(node.message)
    return out
