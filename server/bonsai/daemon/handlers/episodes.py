"""bonsai/episodes/* and bonsai/session/reset (a hard reset closes the open episode)"""

from __future__ import annotations

from bonsai.daemon.rpc import Ctx, handles
from bonsai.protocol import models as m
from bonsai.session.episodes import (
    check_recall_params,
    episode_infos,
    find_episode,
    recall_hits,
    require_on,
    restore,
)
from bonsai.session.host import Host
from bonsai.session.resets import reset


@handles("bonsai/episodes/list", read_only=True)
async def list_(ctx: Ctx, params: m.SessionRef) -> m.EpisodesListResult:
    sid = params.session_id
    infos = await ctx.daemon.views.run(ctx.daemon, sid, lambda host: episode_infos(host, sid))
    return m.EpisodesListResult(episodes=infos)


@handles("bonsai/episodes/restore", read_only=False)
async def restore_(ctx: Ctx, params: m.EpisodeRef) -> m.Empty:
    restore(ctx.daemon, params.session_id, params.number)
    return m.Empty()


@handles("bonsai/episodes/recall", read_only=True)
async def recall(ctx: Ctx, params: m.EpisodesRecallParams) -> m.EpisodesRecallResult:
    check_recall_params(params)
    sid = params.session_id
    return await ctx.daemon.views.run(ctx.daemon, sid, lambda host: _recall(host, params))


def _recall(daemon: Host, params: m.EpisodesRecallParams) -> m.EpisodesRecallResult:
    sid = params.session_id
    daemon.store.get(sid)
    if params.episode is None:
        hits = recall_hits(daemon, sid, params.query or "", params.limit)
        return m.EpisodesRecallResult(results=hits)
    require_on(daemon, sid)
    episode = find_episode(daemon, sid, params.episode)
    hits = []
    for message_id in episode.ids[params.cursor : params.cursor + params.limit]:
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
    return m.EpisodesRecallResult(results=hits, next_cursor=nxt if nxt < len(episode.ids) else None)


@handles("bonsai/session/reset", read_only=False)
async def reset_(ctx: Ctx, params: m.SessionResetParams) -> m.SessionResetResult:
    return reset(ctx.daemon, params.session_id, params.kind)
