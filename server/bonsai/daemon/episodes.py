"""Episodes of a session, and the recall service behind the tool and the protocol.

Episodes are segmented on the active path of the conversation tree, the same
items the pipeline assembles, so numbers agree with the cards the model sees.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bonsai.agent.context_bridge import to_items
from bonsai.core.context import Assembly, Item, assemble
from bonsai.core.context.episodes_stage import episode_by_number, restore_episode, spans
from bonsai.core.episodes import Episode
from bonsai.core.recall import episode_page, frame
from bonsai.daemon.state import Daemon
from bonsai.errors import InvalidParams, NotFound
from bonsai.protocol import models as m
from bonsai.services.store.history_search import search_history
from bonsai.services.store.tree import active_history
from bonsai.services.store.turns import TurnStore

HIT_CHARS = 3_000  # of each search hit shown to the model
OFF = "episodes are turned off (BONSAI_EPISODES=0 or episodes.enabled = false)"


def require_on(daemon: Daemon, session_id: str) -> None:
    row = daemon.store.get(session_id)
    if not daemon.settings(row.workspace).settings.episodes.enabled:
        raise InvalidParams(OFF)


def active_items(daemon: Daemon, session_id: str) -> list[Item]:
    history = daemon.store.messages(session_id)
    return to_items(active_history(daemon.db, session_id, history))


def find_episode(daemon: Daemon, session_id: str, number: int) -> Episode:
    try:
        return episode_by_number(active_items(daemon, session_id), number)
    except KeyError:
        raise NotFound(f"session {session_id} has no episode #{number}") from None


def recall_hits(daemon: Daemon, session_id: str, query: str, limit: int) -> list[m.RecallHit]:
    owner = {mid: e.number for e in spans(active_items(daemon, session_id)) for mid in e.ids}
    hits = []
    for hit in search_history(daemon.db, session_id, query, limit):
        stored = daemon.store.message(session_id, hit.message_id)
        if stored is None:
            continue
        hits.append(
            m.RecallHit(
                message_id=hit.message_id,
                role=stored.message.role,
                episode=owner.get(hit.message_id),
                score=hit.score,
                snippet=hit.snippet,
                text=stored.message.content,
            )
        )
    return hits


def recall_text(daemon: Daemon, session_id: str) -> Callable[[int | None, str | None, int], str]:
    """The recall tool's service: a page of an episode, or framed search hits."""

    def run(episode: int | None, query: str | None, cursor: int) -> str:
        if episode is not None:
            found = find_episode(daemon, session_id, episode)
            wanted = set(found.ids)
            messages = [s for s in daemon.store.messages(session_id) if s.message_id in wanted]
            return episode_page(messages, episode, cursor)[0]
        hits = recall_hits(daemon, session_id, query or "", 5)
        if not hits:
            return frame(f"no earlier messages match {query!r}")
        body = "\n".join(
            f"--- {h.role} {h.message_id} (episode {h.episode}, score {h.score})\n"
            + excerpt(h.text, query or "")
            for h in hits
        )
        return frame(body)

    return run


def excerpt(text: str, query: str, size: int = HIT_CHARS) -> str:
    """Up to ``size`` characters of ``text`` around the first query word it holds
    (the start when none does), marked with … where cut."""
    if len(text) <= size:
        return text
    lowered = text.lower()
    found = [lowered.find(w) for w in re.findall(r"\w+", query.lower()) if len(w) > 2]
    first = min((i for i in found if i >= 0), default=0)
    start = max(0, min(first - size // 3, len(text) - size))
    head = "…" if start else ""
    tail = "…" if start + size < len(text) else ""
    return f"{head}{text[start : start + size]}{tail}"


def current_assembly(daemon: Daemon, session_id: str) -> Assembly:
    """What the next request of the session would be (nothing is saved)."""
    from bonsai.daemon.chat import bridge_for

    bridge = bridge_for(daemon, session_id)
    turn = TurnStore(daemon.db).count(session_id) + 1
    return assemble(bridge.input(daemon.store.messages(session_id), turn))


def episode_infos(daemon: Daemon, session_id: str) -> list[m.EpisodeInfo]:
    require_on(daemon, session_id)
    return [
        m.EpisodeInfo(
            number=row.number,
            title=row.title,
            start_message_id=row.start,
            end_message_id=row.end,
            state=row.state,
            tokens_before=row.tokens_before,
            tokens_after=row.tokens_after,
            archivable=row.archivable,
            note=row.note,
        )
        for row in current_assembly(daemon, session_id).episodes
    ]


def restore(daemon: Daemon, session_id: str, number: int) -> None:
    """Re-splice an archived episode; record the action; tell attached clients."""
    from bonsai.daemon.chat import bridge_for, notify_ctx
    from bonsai.daemon.compaction import ctx_events

    require_on(daemon, session_id)
    bridge = bridge_for(daemon, session_id)
    turns = TurnStore(daemon.db)
    inp = bridge.input(daemon.store.messages(session_id), turns.count(session_id) + 1)
    try:
        state, record = restore_episode(inp, number)
    except KeyError:
        raise NotFound(f"session {session_id} has no episode #{number}") from None
    except ValueError as error:
        raise InvalidParams(str(error)) from None
    bridge.save_state(state)
    daemon.store.record_action(
        session_id, record.node_id or f"ep:{number}", "restore", record.detail
    )
    events = ctx_events([record])
    turns.add_events(session_id, [e.model_dump(by_alias=True, exclude_none=True) for e in events])
    notify_ctx(daemon, session_id, current_assembly(daemon, session_id))


def check_recall_params(params: m.EpisodesRecallParams) -> None:
    if params.episode is None and not (params.query and params.query.strip()):
        raise InvalidParams("give either episode or query")
