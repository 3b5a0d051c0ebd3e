"""Task episodes in the pipeline: re-assert archives, repair them, archive under pressure.

A closed episode may be **archived**: all its messages leave the request
together and one card (``core.episodes.card``) is sent in their place, with
the exact bytes stored in ``ContextState.episodes``. Archiving is

- all-or-nothing per episode, and only for episodes made of whole groups (a
  tool call never parts from its result);
- batched: one pass archives every eligible closed episode at once (the cache
  is lost from the first change anyway);
- taken only under pressure (the request passes ``gc_trigger``) and only when
  the batch pays: the pipeline's rewrite economics, or it brings the request
  back under ``gc_trigger`` by itself;
- never for the open episode, a restored one (restored episodes are never
  archived again), one holding a pinned or user-restored node, a system
  message or a read-reuse target, or one partly folded into the rolling
  summary. Recency protection (recent groups, latest user messages) does not
  hold a closed episode: its topic has ended.

Every call first checks the stored archives against the segmentation of this
request's items: an archive whose messages no longer match, or that covers the
open episode, is dropped (its messages are sent in full again) and its episode
is made non-archivable, with an ``episode-repair`` record. Archives of another
branch of the conversation tree (none of their messages here) wait untouched.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass

from bonsai.core.context.boundary import resumed, window_items
from bonsai.core.context.context_state import ArchiveEntry, ContextState, EpisodeState, with_ids
from bonsai.core.context.groups import group_of
from bonsai.core.context.memo import AssemblyMemo
from bonsai.core.context.pipeline_types import AssembleInput, EpisodeRow, Item, Record
from bonsai.core.context.pricing import payback_ratio
from bonsai.core.context.stubbing import cache_note, work_pays
from bonsai.core.context.view import card_message
from bonsai.core.context.work import Work, analyse
from bonsai.core.history.episodes import Episode, Segmenter, card, segment_entries
from bonsai.domain import Message

# Recency protects the current work from GC and folds; a closed episode is not
# current work (its topic ended), so only the other protections hold it.
RECENT = frozenset({"recent message group", "latest user message", ""})


def spans(
    items: list[Item],
    resume: Episode | None = None,
    resets: Sequence[int] = (),
    memo: AssemblyMemo | None = None,
) -> list[Episode]:
    """The episodes of these items (the active path), in order. A history window
    passes the episode open at its start as ``resume``: it is continued (numbers
    go on from it) and left out when none of its messages are among ``items``.
    ``resets`` are the seqs of hard resets (``EpisodeState.resets``). With a memo
    the segmentation of the items seen before goes on over the new ones only."""
    if memo is None:
        entries = [(item.id, item.seq, item.message) for item in items]
        return [e for e in segment_entries(entries, resets, resume) if e.ids]
    return [e for e in _kept_segments(memo, items, resume, resets).episodes() if e.ids]


@dataclass(slots=True)
class KeptSegments:
    """A session's episodes pass (in its ``AssemblyMemo``): what it was fed, as the
    messages and their (id, seq), and under which resets and resumed span."""

    messages: list[Message]
    keys: list[tuple[str, int]]
    start: tuple[tuple[int, ...], Episode | None]
    segmenter: Segmenter

    def goes_on(self, items: list[Item], start: tuple[tuple[int, ...], Episode | None]) -> bool:
        """``items`` are the ones fed, then more, under the same start (a message read
        again as another object counts when it is equal, and is kept from then on)."""
        n = len(self.messages)
        if start != self.start or len(items) < n:
            return False
        head = items[:n]
        if self.keys != [(i.id, i.seq) for i in head]:
            return False
        messages = self.messages
        fed = [i.message for i in head]
        for pos in [p for p, same in enumerate(map(operator.is_, messages, fed)) if not same]:
            if messages[pos] != fed[pos]:
                return False
            messages[pos] = fed[pos]
        return True


def _kept_segments(
    memo: AssemblyMemo, items: list[Item], resume: Episode | None, resets: Sequence[int]
) -> Segmenter:
    """The memo's pass brought to ``items`` (begun again unless they only grew)."""
    start = (tuple(resets), resume)
    kept: KeptSegments | None = memo.segments
    if kept is None or not kept.goes_on(items, start):
        kept = memo.segments = KeptSegments([], [], start, Segmenter(resets, resume))
    new = items[len(kept.messages) :]
    kept.segmenter.feed((i.id, i.seq, i.message) for i in new)
    kept.messages.extend(i.message for i in new)
    kept.keys.extend((i.id, i.seq) for i in new)
    return kept.segmenter


def resets_of(state: ContextState) -> list[int]:
    """The hard resets recorded in this state."""
    return list(state.episodes.resets) if state.episodes is not None else []


def with_reset(state: ContextState, at: int) -> ContextState:
    """``state`` with a hard reset recorded at seq ``at`` (the next message's seq)."""
    current = state.episodes or EpisodeState()
    resets = sorted({*current.resets, at})
    return state.model_copy(update={"episodes": current.model_copy(update={"resets": resets})})


def episode_by_number(items: list[Item], number: int, resets: Sequence[int] = ()) -> Episode:
    """The episode numbered ``number``; ``KeyError`` when there is none."""
    for episode in spans(items, resets=resets):
        if episode.number == number:
            return episode
    raise KeyError(f"no episode #{number} in this session")


def prepare(inp: AssembleInput) -> tuple[AssembleInput, list[Episode], list[Record]]:
    """The input with its episode state checked (or cleared when episodes are off),
    the episodes of its items, and records of what was repaired."""
    if inp.episodes is None:
        if inp.state.episodes is None:
            return inp, [], []
        state = inp.state.model_copy(update={"episodes": None})
        note = Record(kind="episodes", detail="episodes are off: archived episodes sent in full")
        return inp.model_copy(update={"state": state}), [], [note]
    boundary = inp.state.boundary
    items = window_items(inp.items, boundary)  # a window's root is no episode's
    resume = resumed(boundary.episode) if boundary else None
    episodes = spans(items, resume, resets_of(inp.state), inp.memo)
    state, records = repair(inp.state, items, episodes)
    return inp.model_copy(update={"state": state}), episodes, records


def _problem(entry: ArchiveEntry, episode: Episode | None) -> str | None:
    if episode is None:
        return "its first message no longer starts an episode"
    if not episode.closed:
        return "it covers the open episode"
    if episode.ids != entry.ids:
        return "its messages no longer match the episode's span"
    if episode.number != entry.number:
        return f"the episode is now #{episode.number}, its card says #{entry.number}"
    return None


def repair(
    state: ContextState, items: list[Item], episodes: list[Episode]
) -> tuple[ContextState, list[Record]]:
    """Drop inconsistent archives (made non-archivable) and archives a pin now holds
    (restored); consistent archives and archives of other branches stay."""
    current = state.episodes
    if current is None or not current.archives:
        return state, []
    present = {item.id for item in items}
    by_start = {e.start: e for e in episodes}
    pins = frozenset(state.pins)
    archives, blocked, restored = dict(current.archives), dict(current.blocked), []
    records: list[Record] = []
    for key, entry in sorted(current.archives.items()):
        if not any(i in present for i in entry.ids):
            continue  # archived on another branch of the tree: nothing of it is sent here
        problem = _problem(entry, by_start.get(key))
        pinned = [i for i in entry.ids if i in pins]
        if problem is None and not pinned:
            continue
        del archives[key]
        if problem is not None:
            blocked[key] = problem
            records.append(_repair_record(entry, problem))
        else:
            restored.append(key)
            detail = f"episode #{entry.number} re-spliced: it holds pinned message {pinned[0]}"
            records.append(Record(kind="restore", node_id=f"ep:{entry.number}", detail=detail))
    new = current.model_copy(
        update={
            "archives": archives,
            "blocked": blocked,
            "restored": with_ids(current.restored, restored),
        }
    )
    return state.model_copy(update={"episodes": new}), records


def _repair_record(entry: ArchiveEntry, problem: str) -> Record:
    return Record(
        kind="episode-repair",
        node_id=f"ep:{entry.number}",
        detail=(
            f'episode #{entry.number} "{entry.title}": {problem}; its messages are sent in '
            "full again and it will not be archived again"
        ),
    )


# ------------------------------------------------------------------ archiving
@dataclass(frozen=True, slots=True)
class _Plan:
    episode: Episode
    entry: ArchiveEntry
    now: int  # what its messages cost on the wire now
    card_tokens: int

    @property
    def saved(self) -> int:
        return self.now - self.card_tokens


def blocker(work: Work, episode: Episode) -> str | None:
    """Why ``episode`` cannot be archived now (``None``: it can)."""
    state = work.state.episodes or EpisodeState()
    key = episode.start or ""
    if not episode.closed:
        return "the open episode"
    if key in state.restored:
        return "restored: never archived again"
    if key in state.blocked:
        return f"not archivable: {state.blocked[key]}"
    if key in state.archives:
        return "already archived"
    held = next((i for i in episode.ids if work.protected.get(i, "") not in RECENT), None)
    if held is not None:
        return f"holds a protected message ({held}: {work.protected[held]})"
    if episode.carried or set(episode.ids) & work.state.folded():
        return "partly folded into the rolling summary"  # carried: it began before the window
    owner = group_of(work.groups)
    ids = set(episode.ids)
    if any(i not in owner or not set(owner[i].ids) <= ids for i in episode.ids):
        return "a tool call would part from its result"
    return None


def _plan(work: Work, episode: Episode) -> _Plan | None:
    settings = work.inp.episodes
    if settings is None or blocker(work, episode) is not None:
        return None
    nodes = {n.item.id: n for n in work.nodes}
    before = sum(nodes[i].full_tokens for i in episode.ids)
    text = card(episode, before, settings.card_max_chars)
    entry = ArchiveEntry(
        number=episode.number,
        title=episode.title or f"episode {episode.number}",
        ids=list(episode.ids),
        card=text,
        tokens_before=before,
        turn=work.inp.turn,
    )
    card_tokens = work.inp.counter.count_message(card_message(entry)).tokens
    plan = _Plan(episode, entry, sum(nodes[i].tokens for i in episode.ids), card_tokens)
    return plan if plan.saved > 0 else None


def _pays(work: Work, saved: int, kept: int) -> bool:
    settings = work.inp.settings
    used = work.used
    resent = max(0, used - saved - kept - work.fresh_tokens())
    resolves = used - saved <= settings.gc_trigger * work.usable
    payback = saved >= payback_ratio(settings.min_rewrite_payback, work.pricing) * resent
    return work_pays(work, saved, resent) or (resolves and payback)


def archive_pass(work: Work, episodes: list[Episode]) -> tuple[Work, list[Record]]:
    """Under pressure, archive every eligible closed episode in one batch, if it pays;
    on a cold cache (expired: the rewrite is free) whatever the pressure."""
    if work.inp.episodes is None:
        return work, []
    if not work.cold and work.used <= work.inp.settings.gc_trigger * work.usable:
        return work, []
    plans = [p for p in (_plan(work, e) for e in episodes) if p is not None]
    if not plans:
        return work, []
    saved = sum(p.saved for p in plans)
    kept = work.tokens_before({i for p in plans for i in p.entry.ids})
    if not _pays(work, saved, kept):
        return work, []
    current = work.state.episodes or EpisodeState()
    archives = {**current.archives, **{p.entry.ids[0]: p.entry for p in plans}}
    state = work.state.model_copy(
        update={"episodes": current.model_copy(update={"archives": archives})}
    )
    after = analyse(work.inp, state, work.frame.tools, work)
    return after, [*(_archive_record(p) for p in plans), _batch_record(work, after, saved, kept)]


def _archive_record(plan: _Plan) -> Record:
    entry = plan.entry
    return Record(
        kind="archive",
        node_id=f"ep:{entry.number}",
        detail=(
            f'episode #{entry.number} "{entry.title}": {len(entry.ids)} messages '
            f"({plan.now:,} tokens) replaced by a card of {plan.card_tokens:,} tokens"
        ),
        tokens_before=plan.now,
        tokens_after=plan.card_tokens,
    )


def _batch_record(before: Work, after: Work, saved: int, kept: int) -> Record:
    archived = len(after.state.episodes.archives) if after.state.episodes else 0
    return Record(
        kind="episodes",
        detail=(
            f"archived episodes ({archived} archived in all), saved {saved:,} tokens; "
            f"{cache_note(kept, after.used)}"
        ),
        tokens_before=before.used,
        tokens_after=after.used,
        prefix_hash_before=before.prefix_hash(),
        prefix_hash_after=after.prefix_hash(),
    )


# ------------------------------------------------------------------ ledger and restore
def episode_rows(work: Work, episodes: list[Episode]) -> list[EpisodeRow]:
    """The episode ledger of this assembly."""
    nodes = {n.item.id: n for n in work.nodes}
    state = work.state.episodes or EpisodeState()
    rows: list[EpisodeRow] = []
    for episode in episodes:
        key = episode.start or ""
        archived = key in state.archives  # consistent: ``prepare`` repaired the rest
        restored = key in state.restored
        name = (
            "archived"
            if archived
            else "restored"
            if restored
            else ("closed" if episode.closed else "open")
        )
        why = None if archived else blocker(work, episode)
        rows.append(
            EpisodeRow(
                number=episode.number,
                title=episode.title or f"episode {episode.number}",
                start=key,
                end=episode.end or key,
                messages=episode.size,
                state=name,
                archivable=episode.closed and not restored and key not in state.blocked,
                note=why or "",
                tokens_before=sum(nodes[i].full_tokens for i in episode.ids),
                tokens_after=sum(nodes[i].tokens for i in episode.ids),
            )
        )
    return rows


def restore_episode(inp: AssembleInput, number: int) -> tuple[ContextState, Record]:
    """Re-splice an archived episode's originals; it is never archived again.
    ``KeyError`` for an unknown episode, ``ValueError`` when it is not archived."""
    if inp.episodes is None:
        raise ValueError("episodes are turned off (episodes.enabled = false)")
    inp, _, _ = prepare(inp)
    episode = episode_by_number(inp.items, number, resets_of(inp.state))
    current = inp.state.episodes or EpisodeState()
    key = episode.start or ""
    entry = current.archives.get(key)
    if entry is None:
        state = "restored" if key in current.restored else "not archived"
        raise ValueError(f"episode #{number} is {state}; there is nothing to restore")
    archives = {k: v for k, v in current.archives.items() if k != key}
    new = current.model_copy(
        update={"archives": archives, "restored": with_ids(current.restored, [key])}
    )
    detail = f"re-spliced the {len(entry.ids)} messages of episode #{number}; never archived again"
    record = Record(kind="restore", node_id=f"ep:{number}", detail=detail)
    return inp.state.model_copy(update={"episodes": new}), record
