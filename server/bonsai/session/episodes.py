"""Episodes of a session, and the recall service behind the tool and the protocol.

Episodes are segmented on the active path of the conversation tree, the same
items the pipeline assembles, so numbers agree with the cards the model sees.
"""

from __future__ import annotations

from collections.abc import Callable

from bonsai.agent.context_bridge import to_items
from bonsai.core.context import Assembly, Item, assemble
from bonsai.core.context.episodes_stage import (
    episode_by_number,
    resets_of,
    restore_episode,
    spans,
)
from bonsai.core.context.hidden import RECALL_DEPTH, hidden_ids, recall_order
from bonsai.core.history.episodes import Episode
from bonsai.core.history.pages import episode_page, frame, message_page
from bonsai.domain import StoredMessage
from bonsai.errors import InvalidParams, NotFound
from bonsai.protocol import models as m
from bonsai.services.store.history_search import HistoryHit, search_history
from bonsai.services.store.tree import active_history
from bonsai.services.store.turns import TurnStore
from bonsai.session.base import bridge_for, notify_ctx
from bonsai.session.compaction import ctx_events
from bonsai.session.host import Host
from bonsai.session.retrieval_view import (
    file_regions,
    question_of,
    render_hits,
    view_for,
    worth_showing,
)

SEARCH_HITS = 5  # search hits shown to the model per recall
OFF = "episodes are turned off (BONSAI_EPISODES=0 or episodes.enabled = false)"


def require_on(daemon: Host, session_id: str) -> None:
    row = daemon.store.get(session_id)
    if not daemon.settings(row.workspace).settings.episodes.enabled:
        raise InvalidParams(OFF)


def active_items(daemon: Host, session_id: str) -> list[Item]:
    history = daemon.store.messages(session_id)
    return to_items(active_history(daemon.db, session_id, history))


def session_resets(daemon: Host, session_id: str) -> list[int]:
    """The hard resets recorded for the session (``bonsai/session/reset``)."""
    return resets_of(bridge_for(daemon, session_id).state())


def session_spans(daemon: Host, session_id: str) -> list[Episode]:
    """The session's episodes on its active path, hard resets included."""
    return spans(active_items(daemon, session_id), resets=session_resets(daemon, session_id))


def find_episode(daemon: Host, session_id: str, number: int) -> Episode:
    try:
        return episode_by_number(
            active_items(daemon, session_id), number, session_resets(daemon, session_id)
        )
    except KeyError:
        raise NotFound(f"session {session_id} has no episode #{number}") from None


def recall_hits(daemon: Host, session_id: str, query: str, limit: int) -> list[m.RecallHit]:
    """Search hits as wire records: the whole original text, and the question it
    answered when ``retrieval.mandatory_context`` is on."""
    owner = {mid: e.number for e in session_spans(daemon, session_id) for mid in e.ids}
    view = view_for(daemon, session_id)
    hits = []
    for stored, hit in _found(daemon, session_id, query, limit):
        question = question_of(view, stored) if view.settings.mandatory_context else None
        hits.append(
            m.RecallHit(
                message_id=hit.message_id,
                role=stored.message.role,
                episode=owner.get(hit.message_id),
                score=hit.score,
                snippet=hit.snippet,
                text=stored.message.content,
                question_id=question.message_id if question else None,
                question=question.message.content if question else None,
            )
        )
    return hits


def _found(
    daemon: Host, session_id: str, query: str, limit: int
) -> list[tuple[StoredMessage, HistoryHit]]:
    """The best ``limit`` hits worth showing (earlier recall pages and memory notes
    are copies or background, not history), what the model's window lacks first
    (stubbed, folded, archived, or before the summary boundary), what it saw
    there before its own words: that is what the agent asks recall for
    (``bonsai.core.context.hidden``)."""
    hits = search_history(daemon.db, session_id, query, RECALL_DEPTH)
    messages = daemon.store.messages_by_id(session_id, [hit.message_id for hit in hits])
    out = []
    for hit in hits:
        stored = messages.get(hit.message_id)
        if stored is not None and worth_showing(stored):
            out.append((stored, hit))
    state = bridge_for(daemon, session_id).state()
    hidden = hidden_ids(state)
    start = state.boundary.start_seq if state.boundary is not None else 0
    ranked = recall_order(
        out,
        lambda found: found[0].seq < start or found[0].message_id in hidden,
        lambda found: found[0].message.role != "assistant",
    )
    return ranked[:limit]


RecallService = Callable[..., str]


def recall_text(daemon: Host, session_id: str) -> RecallService:
    """The recall tool's service: one message's exact text, a page of an episode,
    or search hits served by size with their questions and related files."""

    def run(episode: int | None, query: str | None, cursor: int, message: str | None = None) -> str:
        if message is not None:
            return message_text(daemon, session_id, message, cursor)
        if episode is not None:
            found = find_episode(daemon, session_id, episode)
            wanted = set(found.ids)
            messages = [s for s in daemon.store.messages(session_id) if s.message_id in wanted]
            return episode_page(messages, episode, cursor)[0]
        return search_text(daemon, session_id, query or "")

    return run


def message_text(daemon: Host, session_id: str, message_id: str, cursor: int) -> str:
    stored = daemon.store.message(session_id, message_id)
    if stored is None:
        return frame(f"this session has no message {message_id!r}")
    return message_page(stored, cursor)[0]


def search_text(daemon: Host, session_id: str, query: str) -> str:
    found = _found(daemon, session_id, query, SEARCH_HITS)
    if not found:
        return frame(f"no earlier messages match {query!r}")
    owner = {mid: e.number for e in session_spans(daemon, session_id) for mid in e.ids}
    view = view_for(daemon, session_id)
    details = [(s, f"episode {owner.get(h.message_id)}, score {h.score}") for s, h in found]
    blocks = render_hits(view, details, query)
    files = file_regions(view, query, {s.message_id for s, _ in found})
    if files:
        blocks.append("--- current files related to the question\n" + "\n".join(files))
    return frame("\n".join(blocks))


def current_assembly(daemon: Host, session_id: str) -> Assembly:
    """What the next request of the session would be (nothing is saved)."""
    bridge = bridge_for(daemon, session_id)
    turn = TurnStore(daemon.db).count(session_id) + 1
    return assemble(bridge.input(daemon.store.messages(session_id), turn))


def episode_infos(daemon: Host, session_id: str) -> list[m.EpisodeInfo]:
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


def restore(daemon: Host, session_id: str, number: int) -> None:
    """Re-splice an archived episode; record the action; tell attached clients."""
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
