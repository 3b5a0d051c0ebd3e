"""Task episodes: the main conversation partitioned into topic spans.

Boundaries are deterministic, never guessed by a classifier: a
``set_session_title`` or ``todo_write`` call carrying
``episode_action: "new_topic"`` closes the running span at the last user
message before it; ``same_topic`` only renames. A span without real work
(no tool call besides titles and plans) never closes: a ``new_topic`` on it
just renames it. Pure functions over the session log.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from bonsai.domain import Message, StoredMessage

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

    @property
    def start(self) -> str | None:
        return self.ids[0] if self.ids else None

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


def _last_user_index(log: Sequence[StoredMessage], before: int) -> int:
    for index in range(before, -1, -1):
        if log[index].message.role == "user":
            return index
    return 0


def segment(log: Sequence[StoredMessage], resets: Sequence[int] = ()) -> list[Episode]:
    """Split the log into episodes. ``resets`` are seqs of hard resets (close unconditionally)."""
    episodes = [Episode(number=1, title="")]
    owner: dict[int, Episode] = {}
    reset_seqs = set(resets)
    for index, stored in enumerate(log):
        message = stored.message
        current = episodes[-1]
        if stored.seq in reset_seqs and current.ids:
            current = _open_next(episodes, current, index, log, owner, at_user=False)
        action = _action(message) if message.role == "assistant" else None
        if action is not None:
            kind, title = action
            if kind == "new_topic" and current.work > 0:
                current = _open_next(episodes, current, index, log, owner, at_user=True)
            if title:
                current.title = title
        owner[index] = current
        current.ids.append(stored.message_id)
        _note_work(current, message)
    return [e for e in episodes if e.ids]


def _open_next(
    episodes: list[Episode],
    current: Episode,
    index: int,
    log: Sequence[StoredMessage],
    owner: dict[int, Episode],
    *,
    at_user: bool,
) -> Episode:
    """Close ``current``; the new span starts at the last user message (moved over)."""
    start = _last_user_index(log, index) if at_user else index
    nxt = Episode(number=current.number + 1, title="")
    moved = [i for i in range(start, index) if owner.get(i) is current]
    for i in moved:
        current.ids.remove(log[i].message_id)
        nxt.ids.append(log[i].message_id)
        owner[i] = nxt
    current.closed = True
    episodes.append(nxt)
    return nxt


def _note_work(episode: Episode, message: Message) -> None:
    for call in message.tool_calls:
        if call.name in TITLE_TOOLS:
            continue
        episode.work += 1
        try:
            args = json.loads(call.arguments or "{}")
        except json.JSONDecodeError:
            args = {}
        path = args.get("path") if isinstance(args, dict) else None
        if (
            isinstance(path, str)
            and call.name in ("edit_file", "write_file")
            and (path not in episode.files)
        ):
            episode.files.append(path)
    if message.role == "assistant" and message.content.strip() and not message.tool_calls:
        episode.outcome = message.content.strip()


def card(episode: Episode, tokens_before: int) -> str:
    """The compact card that replaces an archived episode (≤ 1,600 characters)."""
    title = episode.title or f"episode {episode.number}"
    head = f'[Episode archived] #{episode.number} "{title}"'
    files = ", ".join(episode.files[:12]) or "none"
    recall = (
        f'Recall: recall({{"episode": {episode.number}}}) pages the original messages and '
        'tool outputs back; recall({"query": "..."}) searches them.'
    )
    budget = CARD_MAX_CHARS - len(head) - len(files) - len(recall) - 120
    outcome = " ".join(episode.outcome.split())
    if len(outcome) > max(budget, 0):
        outcome = outcome[: max(budget - 1, 0)] + "…"
    body = (
        f"{head}\nDone: {episode.work} tool calls over {len(episode.ids)} messages "
        f"(~{tokens_before} tokens).\nFiles changed: {files}\nOutcome: {outcome or 'n/a'}\n{recall}"
    )
    return body[:CARD_MAX_CHARS]
