"""The session's analysis carried from call to call: a call costs its new items
and what a stage rewrites, not the session's length.

An analysis (``work.analyse``) needs, per item, its node (``view.node_of``), the
digest of what it sends (for the prefix hash), its group, its tool calls, the
facts protection reads (user and system messages, read-reuse pointers, the
superseded reads) and the running sum of tokens; the ledger needs a row per
node. The :class:`Tape`, kept in the session's ``AssemblyMemo``, holds all of
these for the items and the state it saw last. Each call (``sync``) it

- finds the first item that is not the one it saw (identity first, then
  equality): when that is before the end (an edited message, another branch of
  the tree) the items' facts are gathered again and the nodes from there on
  are rebuilt; items after the ones it saw are appended;
- compares the state's marks (``view.Marks``: stubs, pins, drops, the fold,
  archives) with the last ones and rebuilds the nodes of only the items whose
  marks changed (a rewrite, a pin or a drop);
- re-sums the tokens from the first changed position.

A ledger row is rebuilt only where its node changed or its protection reason
did (``ledger.message_rows``; the recent tail's protection moves every call).
What still touches every message on every call runs at C speed: list copies,
sums, the prefix digest over the joined per-message digests (its head, the system
parts and the tools, hashed once per frame: ``Tape.prefix_head``). A different token
counter (the model switched) starts the tape again. A property test checks
that a call with the tape assembles exactly what a call without any memo does
(``tests/context/test_ctx_tape.py``).
"""

from __future__ import annotations

import json
import operator
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from bonsai.core.context.context_state import ContextState
from bonsai.core.context.frame import Frame, build_frame, plan_block
from bonsai.core.context.groups import Group, add_item
from bonsai.core.context.harness import is_harness_note
from bonsai.core.context.memo import AssemblyMemo, message_digest
from bonsai.core.context.pipeline_types import Item, LedgerRow, SystemPart, TokenCounter
from bonsai.core.context.prefix import prefix_head
from bonsai.core.context.reuse import pointer_target
from bonsai.core.context.supersede import Supersession
from bonsai.core.context.view import Marks, Node, changed_keys, node_of
from bonsai.domain import Message
from bonsai.settings import ContextSettings


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What one analysis took from the tape (its own copies: the tape moves on)."""

    tape: Tape
    version: int  # the tape's version then: its rows are this analysis's while equal
    digests: list[bytes | None]  # per node: the digest of what it sends (None: not sent)
    sent: list[Message | None]  # per node: what it sends
    cum: list[int]  # cum[i]: tokens of nodes[:i] on the wire
    pos: dict[str, int]  # item id → its first position
    last_assistant: int  # position of the latest assistant message, -1 when none
    assistants: int  # how many assistant messages
    duplicates: bool  # an item id repeats (``pos`` has its first position)

    @property
    def current(self) -> bool:
        return self.tape.version == self.version


class Tape:
    """The per-item products of the last analysis of one session (see the module
    docstring). Not thread-safe, like the memo that holds it."""

    def __init__(self) -> None:
        self.counter: TokenCounter | None = None
        self.version = 0
        self._facts()
        self.marks: Marks | None = None
        self.nodes: list[Node] = []
        self.digests: list[bytes | None] = []
        self.sent: list[Message | None] = []  # per node: what it sends
        self.levels: Counter[str] = Counter()  # confidence → nodes with tokens on the wire
        self.cum: list[int] = [0]
        self.summary_at: int | None = None
        self._folded: frozenset[str] | None = None
        # ledger rows per node (``ledger.message_rows``), stale where None
        self.rows: list[tuple[LedgerRow, ...] | None] = []
        self.stale: set[int] = set()
        self.row_reasons: dict[str, str] = {}  # the protection the rows were built with
        self._frame: tuple[tuple[Any, ...], Frame] | None = None  # (what it is made of, it)
        self._head: tuple[Frame, str, list[LedgerRow]] | None = None  # its system/tool rows
        self._prefix: tuple[Frame, Any] | None = None  # a frame and its prefix head

    def _facts(self) -> None:
        """Forget the items' facts (not the nodes)."""
        self.items: list[Item] = []
        self.messages: list[Message] = []  # the items' messages and (id, seq, turn):
        self.keys: list[tuple[str, int, int]] = []  # an item is these two
        self.pos: dict[str, int] = {}
        self.duplicates = False  # an id seen twice: a state change rebuilds every node
        self.groups: list[Group] = []
        self.calls: dict[str, tuple[str, str]] = {}
        self.answers: dict[str, list[int]] = {}  # call id → positions of its results
        self.heads: dict[str, str] = {}  # tool result id → its step's head
        self.users: list[str] = []
        self.user_seen = False
        self.systems: list[str] = []
        self.pointers: list[tuple[str, str]] = []
        self.assistants: list[int] = []
        self.supersession = Supersession()

    def sync(
        self,
        items: list[Item],
        state: ContextState,
        counter: TokenCounter,
        memo: AssemblyMemo | None,
    ) -> Snapshot:
        """Bring the tape to ``items`` under ``state``; what the analysis takes."""
        self.reset_for(counter)
        seen = len(self.items)
        start = self._common(items)
        truncated = start < seen
        if truncated:  # an earlier item changed: gather the items' facts again
            calls = self.calls
            self._facts()
            self._extend(items, 0)
            for node in self.nodes[start:]:
                self._count(node, -1)
            del self.nodes[start:], self.digests[start:], self.sent[start:], self.rows[start:]
            self.stale = {p for p in self.stale if p < start}
            for call_id in changed_keys(calls, self.calls):  # labels that name them
                self.stale.update(p for p in self.answers.get(call_id, ()) if p < start)
        else:
            self._extend(items, seen)
        kept = len(self.nodes)
        marks = Marks.of(self.pos, state)
        changed = marks.changed(self.marks) if self.marks is not None else None
        same = changed is not None and not changed  # no item's node can differ
        dirty: set[int] = set()
        if changed:
            if self.duplicates:
                dirty = set(range(kept))
            else:
                dirty = {p for i in changed if (p := self.pos.get(i, kept)) < kept}
        self.marks = marks
        for p in [*dirty, *range(kept, len(items))]:
            self._put(p, node_of(items[p], marks, counter, memo))
        first = min(dirty, default=kept)
        tokens = (n.tokens for n in self.nodes[first:])
        self.cum[first:] = accumulate(tokens, initial=self.cum[first])
        self._place_summary(marks.folded, kept, truncated)
        if not same or dirty or kept < len(items):
            self.version += 1
        return Snapshot(
            tape=self,
            version=self.version,
            digests=list(self.digests),
            sent=list(self.sent),
            cum=list(self.cum),
            pos=dict(self.pos),
            last_assistant=self.assistants[-1] if self.assistants else -1,
            assistants=len(self.assistants),
            duplicates=self.duplicates,
        )

    def reset_for(self, counter: TokenCounter) -> None:
        """Start again when the counter is not the one the tape counted with."""
        if counter is not self.counter:
            self.__init__()  # type: ignore[misc]
            self.counter = counter

    def _common(self, items: list[Item]) -> int:
        """How many leading items are the ones the tape saw."""
        old = self.items
        n = min(len(old), len(items))
        if all(map(operator.is_, old, items)):
            return n
        head = items[:n]  # new items of the same messages (a store that keeps them)?
        same = all(map(operator.is_, self.messages, [i.message for i in head]))
        if same and self.keys[:n] == [(i.id, i.seq, i.turn) for i in head]:
            old[:n] = head  # equal: the next call's identity check is C-fast
            return n
        for i in range(n):
            was, now = old[i], items[i]
            if was is now:
                continue
            if was.message is now.message:  # a store that hands back the same message
                same = was.id == now.id and was.seq == now.seq and was.turn == now.turn
            else:
                same = was == now
            if not same:
                return i
            old[i], self.messages[i] = now, now.message  # equal: C-fast next time
        return n

    def _extend(self, items: list[Item], start: int) -> None:
        """Take the items' facts of ``items[start:]``."""
        new = items[start:]
        for pos, item in enumerate(new, start):
            self._add(pos, item)
        self.supersession.extend(new)

    def _add(self, pos: int, item: Item) -> None:
        self.items.append(item)
        self.messages.append(item.message)
        self.keys.append((item.id, item.seq, item.turn))
        if item.id in self.pos:
            self.duplicates = True
        else:
            self.pos[item.id] = pos
        add_item(self.groups, pos, item)
        message = item.message
        role = message.role
        for call in message.tool_calls:
            value = (call.name, call.arguments)
            if call.id in self.answers and self.calls.get(call.id) != value:
                self.stale.update(self.answers[call.id])  # their labels name the call
            self.calls[call.id] = value
        if role == "tool":
            last = self.groups[-1]
            if last.kind == "step" and len(last.ids) > 1:
                self.heads[item.id] = last.ids[0]
            if message.tool_call_id:
                self.answers.setdefault(message.tool_call_id, []).append(pos)
            target = pointer_target(message.content)
            if target is not None:
                self.pointers.append((item.id, target))
        elif role == "user":  # the person's (``harness.person_messages``)
            if not self.user_seen or not is_harness_note(message.content):
                self.users.append(item.id)
            self.user_seen = True
        elif role == "system":
            self.systems.append(item.id)
        elif role == "assistant":
            self.assistants.append(pos)

    def _put(self, pos: int, node: Node) -> None:
        """Set the node at ``pos`` (the next position: append it)."""
        if pos < len(self.nodes):
            self._count(self.nodes[pos], -1)
            self.nodes[pos] = node
        else:
            self.nodes.append(node)
            self.digests.append(None)
            self.sent.append(None)
            self.rows.append(None)
        self._count(node, 1)
        self.stale.add(pos)
        self.sent[pos] = node.message
        self.digests[pos] = None if node.message is None else message_digest(node.message)

    def _count(self, node: Node, n: int) -> None:
        if node.tokens:
            self.levels[node.confidence] += n

    def confidences(self) -> set[str]:
        """The confidence levels of the nodes that put tokens on the wire."""
        return {level for level, n in self.levels.items() if n > 0}

    def _place_summary(self, folded: frozenset[str], kept: int, truncated: bool) -> None:
        """The position of the first folded node (where the summary goes)."""
        if not folded:
            self.summary_at, self._folded = None, folded
            return
        if folded == self._folded and not truncated:
            if self.summary_at is None:  # only a new item can be the first folded one
                new = (p for p in range(kept, len(self.items)) if self.items[p].id in folded)
                self.summary_at = next(new, None)
            return
        self._folded = folded
        self.summary_at = min((self.pos[i] for i in folded if i in self.pos), default=None)

    def frame(
        self,
        parts: list[SystemPart],
        tools: list[dict[str, Any]],
        state: ContextState,
        settings: ContextSettings,
        family: str,
    ) -> Frame:
        """``build_frame``, built again only when what it is made of changed (the
        system parts, the tools sent, the recitation plan, the family)."""
        assert self.counter is not None
        if getattr(self.counter, "calibrates", True):  # its counts move as it learns
            return build_frame(parts, tools, state, settings, family, self.counter)
        key = (family, plan_block(state, settings), tuple(parts), json.dumps(tools))
        if self._frame is not None and self._frame[0] == key:
            return self._frame[1]
        frame = build_frame(parts, tools, state, settings, family, self.counter)
        self._frame, self._head = (key, frame), None
        return frame

    def head_rows(
        self, frame: Frame, all_tools: list[dict[str, Any]], build: Callable[[], list[LedgerRow]]
    ) -> list[LedgerRow]:
        """The system and tool rows of ``frame`` (``build`` makes them), kept while
        the frame and the session's tools are the same."""
        key = json.dumps(all_tools)
        if self._head is None or self._head[0] is not frame or self._head[1] != key:
            self._head = (frame, key, build())
        return list(self._head[2])

    def prefix_head(self, frame: Frame) -> Any:
        """``prefix.prefix_head`` of ``frame`` (a copy to go on from), hashed again only
        for another frame (the tape keeps its frame while what it is made of stands)."""
        if self._prefix is None or self._prefix[0] is not frame:
            self._prefix = (frame, prefix_head(frame.system, frame.tools))
        return self._prefix[1].copy()

    def superseded(self) -> dict[str, str]:
        return self.supersession.view


def tape_of(memo: AssemblyMemo) -> Tape:
    tape: Any = memo.tape
    if tape is None:
        tape = memo.tape = Tape()
    return tape  # type: ignore[no-any-return]
