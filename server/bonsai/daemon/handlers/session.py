"""bonsai/session/*"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from bonsai.daemon.rpc import Ctx, handles
from bonsai.daemon.state import EventFrames
from bonsai.domain import Message
from bonsai.errors import InvalidParams, NotFound
from bonsai.protocol import models as m
from bonsai.services.importers import ImportFormatError, import_file
from bonsai.services.replay.store_import import store_imported
from bonsai.services.store.fork import fork_session
from bonsai.services.store.tree import load_tree
from bonsai.services.workspace import workspace_problem
from bonsai.session import provider_choice
from bonsai.session.approvals import ask_newcomer
from bonsai.session.base import bridge_for
from bonsai.session.convert import session_info, wire_message
from bonsai.session.host import Host


@handles("bonsai/session/create", read_only=False)
async def create(ctx: Ctx, params: m.SessionCreateParams) -> m.SessionCreateResult:
    what = workspace_problem(Path(params.workspace).expanduser())
    if what is not None:  # a session there could read, list or run nothing
        raise InvalidParams(f"workspace {params.workspace!r} {what}; a session needs a folder")
    if params.client is not None:  # a session only when its first turn can run
        provider_choice.check_client(params.client)
        settings = provider_choice.merged(ctx.daemon, params.workspace, params.client)
        provider_choice.check_ready(ctx.daemon, settings, os.environ)
    row = ctx.daemon.store.create(params.workspace, params.title)
    if params.client is not None:
        provider_choice.remember(ctx.daemon, row.session_id, params.client)
    return m.SessionCreateResult(session_id=row.session_id)


@handles("bonsai/session/fork", read_only=False)
async def fork(ctx: Ctx, params: m.SessionForkParams) -> m.SessionForkResult:
    daemon = ctx.daemon
    source = daemon.store.get(params.session_id)
    history = daemon.store.messages(params.session_id)
    tree = load_tree(daemon.db, params.session_id, history)
    try:
        leaf = tree.step_end(params.node_id) if params.node_id else tree.active
    except KeyError as error:
        raise NotFound(str(error).strip("'\"")) from None
    if leaf is not None and tree.is_hidden(leaf):
        raise InvalidParams(f"{params.node_id} is hidden; restore it first")
    by_id = {s.message_id: s for s in history}
    path = [by_id[node_id] for node_id in tree.path(leaf)]
    state = bridge_for(daemon, params.session_id).keeper().whole(history).state
    forked = fork_session(daemon.store, source, path, state, params.title)
    return m.SessionForkResult(session=session_info(forked.session))


@handles("bonsai/session/list", read_only=True)
async def list_(ctx: Ctx, params: m.SessionListParams) -> m.SessionListResult:
    def sessions(host: Host) -> m.SessionListResult:
        rows = host.store.list_sessions(params.workspace)
        return m.SessionListResult(sessions=[session_info(r) for r in rows])

    return await ctx.daemon.views.run(ctx.daemon, None, sessions)


@handles("bonsai/session/attach", read_only=False)
async def attach(ctx: Ctx, params: m.SessionRef) -> m.SessionAttachResult:
    store = ctx.daemon.store
    row = store.get(params.session_id)
    messages = [wire_message(s) for s in store.messages(params.session_id)]
    ctx.connection.attached.add(params.session_id)
    # catch up with the running turn; same loop step, so nothing is missed or doubled
    running = ctx.daemon.hub.runtimes.get(params.session_id)
    for event in running.catch_up() if running is not None else []:  # redacted as broadcast
        frames = EventFrames.of("bonsai/chat/event", event)
        ctx.connection.send("bonsai/chat/event", frames.for_client(ctx.connection))
    ask_newcomer(ctx.daemon, params.session_id, ctx.connection)  # and what it waits for
    return m.SessionAttachResult(session=session_info(row), messages=messages)


@handles("bonsai/session/detach", read_only=False)
async def detach(ctx: Ctx, params: m.SessionRef) -> m.Empty:
    ctx.daemon.store.get(params.session_id)
    ctx.connection.attached.discard(params.session_id)
    return m.Empty()


@handles("bonsai/session/rename", read_only=False)
async def rename(ctx: Ctx, params: m.SessionRenameParams) -> m.Empty:
    row = ctx.daemon.store.rename(params.session_id, params.title)
    event = m.SessionEventParams(session_id=row.session_id, kind="titleChanged", title=row.title)
    ctx.daemon.broadcast(row.session_id, "bonsai/session/event", event)
    return m.Empty()


@handles("bonsai/session/delete", read_only=False)
async def delete(ctx: Ctx, params: m.SessionRef) -> m.Empty:
    daemon = ctx.daemon
    daemon.store.delete(params.session_id)
    daemon.hub.forget(params.session_id)
    daemon.views.forget(params.session_id)
    event = m.SessionEventParams(session_id=params.session_id, kind="deleted")
    daemon.broadcast(params.session_id, "bonsai/session/event", event)
    for connection in daemon.subscribers(params.session_id):
        connection.attached.discard(params.session_id)
    return m.Empty()


@handles("bonsai/session/append", read_only=False)
async def append(ctx: Ctx, params: m.SessionAppendParams) -> m.SessionAppendResult:
    if params.role == "tool":  # a result without its call would break every later request
        raise InvalidParams(
            "role: a tool result can only be stored with its call; use bonsai/session/import"
        )
    stored = ctx.daemon.store.append(
        params.session_id, Message(role=params.role, content=params.content)
    )
    wire = wire_message(stored)
    event = m.SessionEventParams(session_id=params.session_id, kind="messageAppended", message=wire)
    ctx.daemon.broadcast(params.session_id, "bonsai/session/event", event)
    return m.SessionAppendResult(message=wire)


@handles("bonsai/session/import", read_only=False)
async def import_(ctx: Ctx, params: m.SessionImportParams) -> m.SessionImportResult:
    try:
        imported = await asyncio.to_thread(
            import_file, Path(params.path), params.format, params.run
        )
    except ImportFormatError as error:
        raise InvalidParams(str(error)) from None
    except OSError as error:
        raise InvalidParams(f"cannot read {params.path}: {error.strerror}") from None
    session_id = store_imported(ctx.daemon.store, params.workspace, imported)
    return m.SessionImportResult(
        session_id=session_id,
        format=imported.format,
        messages=len(imported.messages),
        runs=imported.runs,
        run=imported.run,
        title=imported.title,
        warnings=list(imported.warnings),
    )
