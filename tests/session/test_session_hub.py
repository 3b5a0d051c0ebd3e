"""The session hub: what a session owns is dropped, and its work cancelled, when it is deleted."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

from bonsai.core.context import AssemblyMemo
from bonsai.daemon.handlers import session as session_handlers
from bonsai.daemon.rpc import Ctx
from bonsai.daemon.state import Daemon
from bonsai.protocol import models as m
from bonsai.services.store.db import open_database
from bonsai.session.base import runtime


def _daemon(tmp_path: Path) -> Daemon:
    db_path = tmp_path / "bonsai.db"
    return Daemon(tmp_path, open_database(db_path), db_path)


async def test_deleting_a_session_cancels_its_background_summary(tmp_path: Path) -> None:
    daemon = _daemon(tmp_path)
    doomed = daemon.store.create(str(tmp_path), "doomed").session_id
    kept = daemon.store.create(str(tmp_path), "kept").session_id
    started = asyncio.Event()

    async def summarising() -> None:  # a fast-model summary that takes its time
        started.set()
        await asyncio.sleep(3600)

    tasks = {sid: asyncio.ensure_future(summarising()) for sid in (doomed, kept)}
    for sid, task in tasks.items():
        daemon.hub.background[sid] = task
        daemon.hub.memos[sid] = AssemblyMemo()
        daemon.hub.repomap_text[sid] = "## Repository map"
    await started.wait()
    connection = daemon.add_connection("test", cast(Any, None), lambda: None)

    await session_handlers.delete(
        Ctx(daemon, connection, cast(Any, None)), m.SessionRef(session_id=doomed)
    )
    await asyncio.sleep(0)

    assert tasks[doomed].cancelled(), "the deleted session's summary was cancelled"
    assert doomed not in daemon.hub.background and doomed not in daemon.hub.memos
    assert doomed not in daemon.hub.repomap_text
    assert not tasks[kept].done(), "another session's summary goes on"
    assert kept in daemon.hub.memos
    daemon.hub.close()
    await asyncio.sleep(0)
    assert tasks[kept].cancelled(), "shutdown cancels what is left"
    daemon.db.close()


async def test_forget_cancels_a_running_turn(tmp_path: Path) -> None:
    daemon = _daemon(tmp_path)
    sid = daemon.store.create(str(tmp_path)).session_id

    running = asyncio.Event()

    async def turn(turn_id: str, text: str) -> str:
        running.set()
        await asyncio.sleep(3600)
        return "done"

    rt = runtime(daemon, sid)
    turn_id = rt.send("hello", turn)
    await running.wait()
    task = rt.tasks[turn_id]
    daemon.hub.forget(sid)
    assert await task == "cancelled"
    assert sid not in daemon.hub.runtimes
    daemon.db.close()
