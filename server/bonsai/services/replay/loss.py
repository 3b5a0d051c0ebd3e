"""The needed-later loss of a replay, and whether one recall gets it back.

For every message a stage removed from the window (a stub, a fold, an archived
episode; the first removal counts), the distinctive items it held
(``bonsai.core.replay.loss``) are looked for in every later recorded assistant
message. One found there and nowhere in the window sent for that message was
**needed later**. It is **recoverable** when the recall tool's search (FTS5
with bm25 over the session's messages so far, as ``bonsai recall`` and the
agent's ``recall {query}`` search them) returns, in its top 3, the removed
message or another holding every needed item of it, for a query made of the
agent's own later words (the lines of its later message that use the items);
or, for a stub, when its placeholder ranks in the top 3 of the window's stubs
for that query (what ran, on which path: the output ``read_tool_output``
would be asked for by the call id the stub names).

Tokens: ``removed`` sums the removed messages' full size; ``needed`` the lines
of them that hold a needed item (see the core module). A span is one removal
event: one stub, one fold batch, one archived episode.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

import apsw

from bonsai.core.context import Assembly, Item
from bonsai.core.context.hidden import RECALL_DEPTH, hidden_ids, recall_order
from bonsai.core.context.trace import view_where
from bonsai.core.replay.loss import SpanItems
from bonsai.core.retrieval.query import fts_match_expression
from bonsai.domain import Message
from bonsai.services.replay.runner import ReplayConfig, StepRow, executed
from bonsai.services.replay.source import ReplaySource

TOP = 3


@dataclass(frozen=True)
class NeededSpan:
    """One needed removed message, for reports and for finding what misses."""

    session: str
    message_id: str
    how: str  # stub, fold, archive, drop
    what: str  # the tool that produced it (or the role)
    removed_at: int  # the call that removed it
    used_at: int  # the call whose reply first used it
    items: tuple[str, ...]  # the needed items at that first use
    query: str
    hits: tuple[str, ...]  # what recall returned (message ids)
    recoverable: bool


@dataclass
class Loss:
    """Sums of the measure over one or many replays."""

    removed_tokens: int = 0
    needed_tokens: int = 0
    spans: int = 0
    needed_spans: int = 0
    recoverable_spans: int = 0
    examples: list[str] = field(default_factory=list)  # a few needed items, for reports
    by_stage: dict[str, list[int]] = field(default_factory=dict)  # how → [removed, needed]
    by_kind: dict[str, list[int]] = field(default_factory=dict)  # what → [removed, needed]
    # "how, output class" and "output class, age at removal" → [removed, needed, messages]
    by_removal: dict[str, list[int]] = field(default_factory=dict)
    by_age: dict[str, list[int]] = field(default_factory=dict)
    needed: list[NeededSpan] = field(default_factory=list)  # every needed span's first use

    def add(self, other: Loss) -> None:
        self.removed_tokens += other.removed_tokens
        self.needed_tokens += other.needed_tokens
        self.spans += other.spans
        self.needed_spans += other.needed_spans
        self.recoverable_spans += other.recoverable_spans
        self.examples.extend(other.examples[: max(0, 10 - len(self.examples))])
        for how, (removed, needed) in other.by_stage.items():
            mine = self.by_stage.setdefault(how, [0, 0])
            mine[0] += removed
            mine[1] += needed
        for what, (removed, needed) in other.by_kind.items():
            mine = self.by_kind.setdefault(what, [0, 0])
            mine[0] += removed
            mine[1] += needed
        for table, theirs in ((self.by_removal, other.by_removal), (self.by_age, other.by_age)):
            for key, sums in theirs.items():
                mine = table.setdefault(key, [0, 0, 0])
                for k, value in enumerate(sums):
                    mine[k] += value
        self.needed.extend(other.needed)

    def needed_share(self) -> float:
        return self.needed_tokens / self.removed_tokens if self.removed_tokens else 0.0

    def recoverable_share(self) -> float:
        return self.recoverable_spans / self.needed_spans if self.needed_spans else 1.0


def removed_ids(assembly: Assembly) -> dict[str, str]:
    """Message id → how the state removed it (stub, fold, archive, drop)."""
    state = assembly.state
    out: dict[str, str] = dict.fromkeys(state.stubs, "stub")
    out.update(dict.fromkeys(state.folded(), "fold"))
    if state.episodes is not None:
        for entry in state.episodes.archives.values():
            out.update(dict.fromkeys(entry.ids, "archive"))
    out.update(dict.fromkeys(state.drops, "drop"))
    return out


def _text(message: Message) -> str:
    calls = " ".join(f"{c.name} {c.arguments}" for c in message.tool_calls)
    return f"{message.content}\n{calls}" if calls else message.content


def _window(assembly: Assembly) -> str:
    parts = [p.text for p in assembly.system]
    parts.extend(json.dumps(t) for t in assembly.tools)
    parts.extend(_text(m) for m in assembly.messages)
    return "\n".join(parts)


def _what(message: Message) -> str:
    ev = message.evidence
    if message.role != "tool":
        return message.role
    return ev.kind if ev is not None else (message.name or "tool")


AGES = ((4, "0-4 calls"), (8, "5-8 calls"), (16, "9-16 calls"))


def age_bucket(calls: int) -> str:
    """The age of a removed message at its removal, in calls, as a bucket."""
    return next((label for top, label in AGES if calls <= top), "over 16 calls")


def output_class(item: Item, calls: dict[str, tuple[str, str]]) -> str:
    """What a removed message was, for the breakdown: the agent's own message,
    a user message, a view of a file's lines (numbered, or a read of a range),
    a whole-file read, or the tool output's evidence kind."""
    message = item.message
    if message.role != "tool":
        return "agent" if message.role == "assistant" else message.role
    ev = message.evidence
    _, arguments = calls.get(message.tool_call_id or "", ("", ""))
    if view_where(item, arguments) is not None:
        if ev is not None and ev.kind == "read" and ev.start_line is None:
            return "file read"
        return "view of lines"
    return ev.kind if ev is not None else "tool"


def later_query(later: str, used: set[str]) -> str:
    """The agent's own words that used the items: the lines of its later
    message that hold them (what it would ask recall for)."""
    lines = [line for line in later.splitlines() if any(i in line for i in used)]
    return "\n".join(lines) or later


class _Index:
    """The session's messages so far in an FTS5 table, as the store indexes them."""

    def __init__(self) -> None:
        self.conn = apsw.Connection(":memory:")
        self.conn.execute(
            "CREATE VIRTUAL TABLE fts USING fts5(content, message_id UNINDEXED,"
            " tokenize='porter unicode61')"
        )
        self.count = 0
        self.observations: set[str] = set()  # what the agent saw (not its own messages)

    def grow(self, source: ReplaySource, upto: int) -> None:
        new = source.items[self.count : upto]
        self.observations.update(i.id for i in new if i.message.role != "assistant")
        rows = [(i.message.content, i.id) for i in new]
        if rows:
            self.conn.executemany("INSERT INTO fts(content, message_id) VALUES (?, ?)", rows)
        self.count = max(self.count, upto)

    def top(self, query: str, limit: int = TOP, hidden: frozenset[str] | None = None) -> list[str]:
        """The best ``limit`` hits; with ``hidden``, ranked as the recall tool ranks
        them: what the window lacks first (``recall_order``)."""
        expression = fts_match_expression(query)
        if expression is None:
            return []
        rows = self.conn.execute(
            "SELECT message_id FROM fts WHERE fts MATCH ? ORDER BY bm25(fts), rowid LIMIT ?",
            (expression, limit if hidden is None else RECALL_DEPTH),
        )
        ids = [r[0] for r in rows]
        if hidden is not None:
            ids = recall_order(ids, hidden.__contains__, self.observations.__contains__)
        return ids[:limit]


def stub_top(assembly: Assembly, query: str, limit: int = TOP) -> list[str]:
    """The stubs in this window whose text (what ran, on which path) best matches
    ``query``: the outputs ``read_tool_output`` would be asked for."""
    stubs = assembly.state.stubs
    if not stubs:
        return []
    index = _Index()
    index.conn.executemany(
        "INSERT INTO fts(content, message_id) VALUES (?, ?)",
        [(entry.text, item_id) for item_id, entry in stubs.items()],
    )
    return index.top(query, limit)


class _Said:
    """What the agent wrote (its messages and tool-call arguments) before a position."""

    def __init__(self, items: Sequence[Item]) -> None:
        self.texts = [
            (k, _text(i.message)) for k, i in enumerate(items) if i.message.role == "assistant"
        ]

    def before(self, position: int) -> str:
        return "\n".join(t for k, t in self.texts if k < position)


class _StubSearch:
    """The window's stubs searched by their placeholder text (built once per call)."""

    def __init__(self, assembly: Assembly) -> None:
        self.assembly = assembly
        self.cache: dict[str, list[str]] = {}

    def top(self, query: str) -> list[str]:
        if query not in self.cache:
            self.cache[query] = stub_top(self.assembly, query)
        return self.cache[query]


def _recall(
    index: _Index,
    stubs: _StubSearch,
    later: str,
    item_id: str,
    used: set[str],
    by_id: dict[str, Item],
    hidden: frozenset[str],
) -> tuple[bool, str, tuple[str, ...]]:
    """Whether one recall with the agent's words that used ``used`` returns
    ``item_id`` (or a message holding every item of ``used``) in its top 3, or
    names its stub; with the query and the hits."""
    query = later_query(later, used)
    hits = tuple(index.top(query, hidden=hidden))
    back = item_id in stubs.top(query) or any(
        h == item_id or all(u in by_id[h].message.content for u in used) for h in hits
    )
    return back, query, hits


def measure_loss(source: ReplaySource, rows: Sequence[StepRow], config: ReplayConfig) -> Loss:
    """The needed-later loss of one replay (``rows`` from ``replay_steps`` on ``source``
    with ``config``): spans are judged as the managed side held them (tool outputs
    as bonsai's tools return them, ``executed``)."""
    counter = config.counter
    if config.policy != "none":
        source = executed(source, config.tool_output)
    loss = Loss()
    by_id = {i.id: i for i in source.items}
    position = {i.id: k for k, i in enumerate(source.items)}
    steps = source.steps
    seen: set[str] = set()
    pending: dict[str, tuple[int, str, SpanItems]] = {}  # id → (span number, how, items)
    spans_needed: dict[int, bool] = {}
    needed_items: dict[str, set[str]] = {}
    removed_at: dict[str, int] = {}
    said = _Said(source.items)
    index = _Index()
    calls = {c.id: (c.name, c.arguments) for i in source.items for c in i.message.tool_calls}
    classes: dict[str, tuple[str, str]] = {}  # id → (by_removal key, by_age key)
    for n, row in enumerate(rows):
        now = removed_ids(row.assembly)
        fresh = sorted((i for i in now if i not in seen and i in by_id), key=position.__getitem__)
        by_how: dict[str, list[str]] = {}
        for item_id in fresh:
            by_how.setdefault(now[item_id], []).append(item_id)
        for how, ids in by_how.items():
            spans = [[i] for i in ids] if how == "stub" else [ids]  # a stub is its own span
            for ids_of_span in spans:
                loss.spans += 1
                span = loss.spans
                for item_id in ids_of_span:
                    text = by_id[item_id].message.content
                    tokens = counter.count_text(text).tokens
                    loss.removed_tokens += tokens
                    loss.by_stage.setdefault(how, [0, 0])[0] += tokens
                    loss.by_kind.setdefault(_what(by_id[item_id].message), [0, 0])[0] += tokens
                    kind = output_class(by_id[item_id], calls)
                    age = n - bisect.bisect_right(steps, position[item_id])
                    keys = (f"{how}, {kind}", f"{kind}, {age_bucket(age)}")
                    classes[item_id] = keys
                    for table, key in zip((loss.by_removal, loss.by_age), keys, strict=True):
                        sums = table.setdefault(key, [0, 0, 0])
                        sums[0] += tokens
                        sums[2] += 1
                    if by_id[item_id].message.role != "assistant":  # observations only
                        own = said.before(position[item_id])
                        pending[item_id] = (span, how, SpanItems.of(item_id, text).without(own))
                        removed_at[item_id] = n
        seen.update(fresh)
        if not pending:
            continue
        # the recorded reply to this call: written with what this window lacks
        reply = source.items[steps[n]].message
        later = _text(reply)
        window = _window(row.assembly)
        first_use: dict[int, dict[str, set[str]]] = {}  # span → message → items used now
        for item_id, (span, _how, items) in pending.items():
            used = items.used_in(later, window) - needed_items.get(item_id, set())
            if not used:
                continue
            needed_items.setdefault(item_id, set()).update(used)
            if span not in spans_needed:
                first_use.setdefault(span, {})[item_id] = used
        if not first_use:
            continue
        index.grow(source, steps[n])
        stubs_for = _StubSearch(row.assembly)
        hidden = hidden_ids(row.assembly.state)
        for span, found in first_use.items():
            results = [
                _recall(index, stubs_for, later, item_id, used, by_id, hidden)
                for item_id, used in found.items()
            ]
            back = all(ok for ok, _, _ in results)
            spans_needed[span] = back
            first = next(iter(found))
            wanted = set().union(*found.values())
            _, query, hits = next((r for r in results if not r[0]), results[0])
            loss.needed.append(
                NeededSpan(
                    session=source.session_id,
                    message_id=first,
                    how=pending[first][1],
                    what=_what(by_id[first].message),
                    removed_at=removed_at[first],
                    used_at=n,
                    items=tuple(sorted(wanted)),
                    query=query,
                    hits=hits,
                    recoverable=back,
                )
            )
            if len(loss.examples) < 10:
                loss.examples.append(f"{first}: {sorted(wanted)[0][:80]}")
    for item_id, used in needed_items.items():
        _, how, items = pending[item_id]
        tokens = counter.count_text(items.needed_text(used)).tokens
        loss.needed_tokens += tokens
        loss.by_stage.setdefault(how, [0, 0])[1] += tokens
        loss.by_kind.setdefault(_what(by_id[item_id].message), [0, 0])[1] += tokens
        for table, key in zip((loss.by_removal, loss.by_age), classes[item_id], strict=True):
            table[key][1] += tokens
    loss.needed_spans = len(spans_needed)
    loss.recoverable_spans = sum(spans_needed.values())
    return loss
