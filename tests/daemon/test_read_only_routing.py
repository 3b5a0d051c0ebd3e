"""Every request marked read-only is served off the loop, but the two plain lookups.

Each read-only handler is called as the wire calls it, on a daemon holding one
session; the view worker counts what it ran. A new read-only handler that computes
on the loop (and so holds up every stream while it does) fails here.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, cast

import bonsai.daemon.handlers  # noqa: F401  (registers the handlers)
from bonsai.daemon.rpc import HANDLERS, READ_ONLY, Ctx
from bonsai.daemon.state import Daemon
from bonsai.domain import Message
from bonsai.errors import BonsaiError
from bonsai.protocol.methods import BY_NAME
from bonsai.services.store.db import open_database
from bonsai.session.views import ViewWorker

# answered from what the daemon holds in memory: settings, counts, the hub's last assembly
LOOKUPS = {"bonsai/config/get", "bonsai/daemon/status"}


class CountingWorker(ViewWorker):
    def __init__(self, db_path: Path) -> None:
        super().__init__(db_path)
        self.ran = 0

    async def run(self, host: Any, session_id: Any, view: Any, key: Any = None) -> Any:
        self.ran += 1
        return await super().run(host, session_id, view, key)

    async def call(self, read: Any) -> Any:
        self.ran += 1
        return await super().call(read)


async def test_every_read_only_handler_but_the_lookups_runs_on_the_view_worker(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    db_path = tmp_path / "bonsai.db"
    daemon = Daemon(tmp_path, open_database(db_path), db_path)
    worker = daemon.views = CountingWorker(db_path)
    sid = daemon.store.create(str(workspace)).session_id
    first = daemon.store.append(sid, Message(role="user", content="how is the parser built?"))
    second = daemon.store.append(sid, Message(role="assistant", content="with a lexer first"))
    ws, node = str(workspace), first.message_id
    params: dict[str, dict[str, Any]] = {
        "bonsai/config/get": {"workspace": ws},
        "bonsai/ctx/get": {"sessionId": sid},
        "bonsai/ctx/text": {"sessionId": sid, "nodeId": node},
        "bonsai/daemon/status": {},
        "bonsai/episodes/list": {"sessionId": sid},
        "bonsai/episodes/recall": {"sessionId": sid, "query": "parser"},
        "bonsai/memory/get": {"workspace": ws, "name": "nothing-here"},
        "bonsai/memory/list": {"workspace": ws},
        "bonsai/memory/search": {"workspace": ws, "query": "parser"},
        "bonsai/rules/list": {"workspace": ws},
        "bonsai/session/list": {},
        "bonsai/tree/compare": {"sessionId": sid, "a": node, "b": second.message_id},
        "bonsai/tree/get": {"sessionId": sid},
    }
    assert set(params) == READ_ONLY, "a new read-only request: add it here"
    ctx = Ctx(daemon, cast(Any, None), cast(Any, None))
    on_loop = set()
    try:
        for name in sorted(READ_ONLY):
            before = worker.ran
            with contextlib.suppress(BonsaiError):  # memory/get of a missing entry: NotFound
                await HANDLERS[name](ctx, BY_NAME[name].params.model_validate(params[name]))
            if worker.ran == before:
                on_loop.add(name)
    finally:
        for pool in daemon.pools.values():
            await pool.close_all()
        daemon.views.close()
        daemon.db.close()
    assert on_loop == LOOKUPS
