"""bonsai/episodes/*"""

from __future__ import annotations

from bonsai.daemon.episodes import (
    RESTORED_KEY,
    check_recall_params,
    episode_infos,
    find_episode,
    recall_hits,
)
from bonsai.daemon.rpc import Ctx, handles
from bonsai.protocol import models as m


@handles("bonsai/episodes/list")
async def list_(ctx: Ctx, params: m.SessionRef) -> m.EpisodesListResult:
    ctx.daemon.store.get(params.session_id)
    return m.EpisodesListResult(episodes=episode_infos(ctx.daemon, params.session_id))


@handles("bonsai/episodes/restore")
async def restore(ctx: Ctx, params: m.EpisodeRef) -> m.Empty:
    daemon = ctx.daemon
    find_episode(daemon, params.session_id, params.number)
    restored = set(daemon.store.get_state(params.session_id, RESTORED_KEY, []) or [])
    restored.add(params.number)
    daemon.store.set_state(params.session_id, RESTORED_KEY, sorted(restored))
    return m.Empty()


@handles("bonsai/episodes/recall")
async def recall(ctx: Ctx, params: m.EpisodesRecallParams) -> m.EpisodesRecallResult:
    check_recall_params(params)
    daemon, sid = ctx.daemon, params.session_id
    daemon.store.get(sid)
    if params.episode is not None:
        episode = find_episode(daemon, sid, params.episode)
        wanted = episode.ids[params.cursor : params.cursor + params.limit]
        hits = []
        for message_id in wanted:
            stored = daemon.store.message(sid, message_id)
            if stored is not None:
                hits.append(
                    m.RecallHit(
                        message_id=message_id,
                        role=stored.message.role,
                        episode=episode.number,
                        score=1.0,
                        snippet=stored.message.content[:200],
                        text=stored.message.content,
                    )
                )
        nxt = params.cursor + params.limit
        return m.EpisodesRecallResult(
            results=hits, next_cursor=nxt if nxt < len(episode.ids) else None
        )
    return m.EpisodesRecallResult(
        results=recall_hits(daemon, sid, params.query or "", params.limit)
    )
