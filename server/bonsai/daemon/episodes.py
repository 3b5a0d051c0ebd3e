"""Episodes of a session, and the recall service behind the tool and the protocol."""

from __future__ import annotations

from collections.abc import Callable

from bonsai.core.episodes import Episode, segment
from bonsai.core.recall import episode_page, frame
from bonsai.daemon.state import Daemon
from bonsai.errors import InvalidParams, NotFound
from bonsai.protocol import models as m
from bonsai.services.store.history_search import search_history

RESTORED_KEY = "episodes_restored"


def episodes_of(daemon: Daemon, session_id: str) -> list[Episode]:
    return segment(daemon.store.messages(session_id))


def find_episode(daemon: Daemon, session_id: str, number: int) -> Episode:
    for episode in episodes_of(daemon, session_id):
        if episode.number == number:
            return episode
    raise NotFound(f"session {session_id} has no episode #{number}")


def recall_hits(daemon: Daemon, session_id: str, query: str, limit: int) -> list[m.RecallHit]:
    owner = {mid: e.number for e in episodes_of(daemon, session_id) for mid in e.ids}
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
            f"--- {h.role} {h.message_id} (episode {h.episode}, score {h.score})\n{h.text[:3000]}"
            for h in hits
        )
        return frame(body)

    return run


def episode_infos(daemon: Daemon, session_id: str) -> list[m.EpisodeInfo]:
    restored = set(daemon.store.get_state(session_id, RESTORED_KEY, []) or [])
    out = []
    for episode in episodes_of(daemon, session_id):
        state = (
            "restored" if episode.number in restored else ("closed" if episode.closed else "open")
        )
        out.append(
            m.EpisodeInfo(
                number=episode.number,
                title=episode.title or f"episode {episode.number}",
                start_message_id=episode.start,
                end_message_id=episode.end,
                state=state,
            )
        )
    return out


def check_recall_params(params: m.EpisodesRecallParams) -> None:
    if params.episode is None and not (params.query and params.query.strip()):
        raise InvalidParams("give either episode or query")
