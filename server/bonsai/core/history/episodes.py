"""Task episodes: the main conversation partitioned into topic spans.

Boundaries are deterministic, never guessed by a classifier: a
``set_session_title`` or ``todo_write`` call carrying
``episode_action: "new_topic"`` closes the running span at the last user
message before it; ``same_topic`` only renames. A span without real work
(no tool call besides titles and plans) never closes: a ``new_topic`` on it
just renames it. A **hard reset** (``/clear``, ``/start``, ``/review``) recorded
at seq ``r`` closes the running span unconditionally before the first message
appended after it (the first one whose seq is ``r`` or more). Pure functions
over the session log (or any sequence of ``(id, seq, message)`` entries, such
as the pipeline's items).

Segmentation is a left-to-right pass whose only look-back is to the last user
message before a ``new_topic`` call. So it can **resume**: given the episode
that was open just before a user message (its number, first message, size,
title, work, files, task and outcome), segmenting the log from that user
message on gives exactly the episodes a pass over the whole log gives there.
A history window that starts inside an episode relies on this.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from bonsai.domain import Message, StoredMessage

Entry = tuple[str, int, Message]  # (message id, seq, message)

TITLE_TOOLS = {"set_session_title", "todo_write"}
CARD_MAX_CHARS = 1_600


@dataclass
class Episode:
    number: int
    title: str
    ids: list[str] = field(default_factory=list)
    closed: bool = False
    work: int = 0  # tool calls that did something (not titles or plans)
    files: list[str] = field(default_factory=list)
    outcome: str = ""
    task: str = ""  # the first user message of the span
    carried: int = 0  # messages of the span before the log segmented (a resumed span)
    first_id: str | None = None  # the span's first message when ``carried``
    last_seq: int = 0  # the seq of its last message (a hard reset after it closes it)

    @property
    def start(self) -> str | None:
        if self.carried:
            return self.first_id
        return self.ids[0] if self.ids else None

    @property
    def size(self) -> int:
        """All its messages, the carried ones included."""
        return self.carried + len(self.ids)

    def resumed(self) -> Episode:
        """This span as the open span a later segmentation continues: its ids become
        carried (only their count and first id are kept)."""
        return replace(
            self,
            ids=[],
            closed=False,
            files=list(self.files),
            carried=self.size,
            first_id=self.start,
        )

    @property
    def end(self) -> str | None:
        return self.ids[-1] if self.ids else None


def _action(message: Message) -> tuple[str, str] | None:
    """(episode_action, title) carried by a title/plan call of this message."""
    for call in message.tool_calls:
        if call.name not in TITLE_TOOLS:
            continue
        try:
            args = json.loads(call.arguments or "{}")
        except json.JSONDecodeError:
            continue
        if not isinstance(args, dict):
            continue
        action = args.get("episode_action")
        if action in ("new_topic", "same_topic"):
            title = str(args.get("title") or "").strip()
            return str(action), title
    return None


def _last_user_index(log: Sequence[Entry], before: int) -> int:
    for index in range(before, -1, -1):
        if log[index][2].role == "user":
            return index
    return 0


def segment(log: Sequence[StoredMessage], resets: Sequence[int] = ()) -> list[Episode]:
    """Split the log into episodes. ``resets`` are seqs of hard resets: each closes the
    running span unconditionally before the first message whose seq reaches it."""
    return segment_entries([(s.message_id, s.seq, s.message) for s in log], resets)


def segment_entries(
    log: Sequence[Entry], resets: Sequence[int] = (), resume: Episode | None = None
) -> list[Episode]:
    """``segment`` over ``(id, seq, message)`` entries, in conversation order.

    ``resume`` continues a span opened before ``log`` (``Episode.resumed``; the
    log must then start with a user message): numbering goes on from it, and it
    is returned first even when all its messages lie before ``log``. A reset applies
    between two consecutive entries when ``previous seq < reset <= seq`` (the
    resumed span's ``last_seq`` counts as the entry before the first); a reset
    after the last entry closes the last span without opening another."""
    segmenter = Segmenter(resets, resume)
    segmenter.feed(log)
    return segmenter.episodes()


class Segmenter:
    """:func:`segment_entries` as a pass that goes on: ``feed`` entries in conversation
    order; ``episodes`` gives, at any point, what ``segment_entries`` of every entry fed
    so far gives (copies: the pass keeps its own spans). A ``new_topic`` looks back only
    into the open span, so the spans before it never change once closed, and a log that
    grew costs its new entries (a session's assembly keeps one, ``episodes_stage``)."""

    def __init__(self, resets: Sequence[int] = (), resume: Episode | None = None) -> None:
        first = None
        if resume is not None:  # its own lists: the pass appends to the open span's
            first = replace(resume, ids=list(resume.ids), files=list(resume.files))
        self.log: list[Entry] = []
        self.spans = [first or Episode(number=1, title="")]
        self.owner: dict[int, Episode] = {}
        self.resets = sorted(set(resets))
        self.previous = first.last_seq if first is not None else None

    def feed(self, entries: Iterable[Entry]) -> None:
        log, spans, owner, resets = self.log, self.spans, self.owner, self.resets
        for entry in entries:
            index = len(log)
            log.append(entry)
            message_id, seq, message = entry
            current = spans[-1]
            if _reset_between(resets, self.previous, seq) and current.size:
                current = _open_next(spans, current, index, log, owner, at_user=False)
            self.previous = seq
            action = _action(message) if message.role == "assistant" else None
            if action is not None:
                kind, title = action
                if kind == "new_topic" and current.work > 0:
                    current = _open_next(spans, current, index, log, owner, at_user=True)
                if title:
                    current.title = title
            owner[index] = current
            current.ids.append(message_id)
            current.last_seq = seq
            _note_work(current, message)

    def episodes(self) -> list[Episode]:
        made = [replace(e, ids=list(e.ids), files=list(e.files)) for e in self.spans if e.size]
        last = self.previous
        if made and self.spans[-1].size and any(last is not None and r > last for r in self.resets):
            made[-1].closed = True  # a reset after the last message: closed, nothing new yet
        return _renumbered(made, self.spans[0].number)


def _reset_between(resets: Sequence[int], previous: int | None, seq: int) -> bool:
    """Is a hard reset recorded after the entry at ``previous`` and before ``seq``?"""
    if previous is None:
        return False  # nothing came before: there is no span to close
    return any(previous < reset <= seq for reset in resets)


def _renumbered(episodes: list[Episode], first: int = 1) -> list[Episode]:
    """Episodes numbered from ``first`` (a span emptied by a boundary leaves no gap)."""
    for number, episode in enumerate(episodes, first):
        episode.number = number
    return episodes


def _open_next(
    episodes: list[Episode],
    current: Episode,
    index: int,
    log: Sequence[Entry],
    owner: dict[int, Episode],
    *,
    at_user: bool,
) -> Episode:
    """Close ``current``; the new span starts at the last user message (moved over)."""
    start = _last_user_index(log, index) if at_user else index
    nxt = Episode(number=current.number + 1, title="")
    moved = [i for i in range(start, index) if owner.get(i) is current]
    for i in moved:
        current.ids.remove(log[i][0])
        nxt.ids.append(log[i][0])
        owner[i] = nxt
    current.closed = True
    episodes.append(nxt)
    return nxt


def _note_work(episode: Episode, message: Message) -> None:
    if message.role == "user" and not episode.task and message.name is None:
        episode.task = message.content.strip()
    for call in message.tool_calls:
        if call.name in TITLE_TOOLS:
            continue
        episode.work += 1
        path = _edited_path(call.name, call.arguments)
        if path is not None:
            _add_file(episode, path)
    evidence = message.evidence
    if evidence is not None and evidence.kind in ("edit", "write") and evidence.ok:
        _add_file(episode, evidence.path)
    if message.role == "assistant" and message.content.strip() and not message.tool_calls:
        episode.outcome = message.content.strip()


def _edited_path(name: str, arguments: str) -> str | None:
    if name not in ("edit_file", "write_file"):
        return None
    try:
        args = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return None
    path = args.get("path") if isinstance(args, dict) else None
    return path if isinstance(path, str) else None


def _add_file(episode: Episode, path: str | None) -> None:
    if path and path not in episode.files:
        episode.files.append(path)


def _cut(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return flat[: max(limit - 1, 0)] + "…" if limit > 0 else ""


def card(episode: Episode, tokens_before: int, max_chars: int = CARD_MAX_CHARS) -> str:
    """The compact card that replaces an archived episode (≤ ``max_chars``, 1,600 by
    default): what was asked and done, the files changed, the outcome, how to recall."""
    title = _cut(episode.title or f"episode {episode.number}", 120)
    head = f'[Episode archived] #{episode.number} "{title}"'
    done = (
        f"Done: {episode.work} tool calls over {len(episode.ids)} messages "
        f"(~{tokens_before:,} tokens)."
    )
    recall = (
        f'Recall: recall({{"episode": {episode.number}}}) pages the original messages and '
        'tool outputs back; recall({"query": "..."}) searches them.'
    )
    room = max_chars - len(head) - len(done) - len(recall) - 40  # 40: labels and newlines
    asked = f"Asked: {_cut(episode.task, min(240, room // 3)) or 'n/a'}"
    files = f"Files changed: {_cut(', '.join(episode.files), min(300, room // 3)) or 'none'}"
    fixed = [head, asked, done, files]
    left = max_chars - sum(len(line) + 1 for line in fixed) - len(recall) - len("Outcome: ") - 1
    outcome = f"Outcome: {_cut(episode.outcome, left) or 'n/a'}"
    return "\n".join([*fixed, outcome, recall])[:max_chars]
