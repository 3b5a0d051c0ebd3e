"""A ledger being polled is computed again when its session is written to, in the view
process, before the next poll comes: that poll finds the new log kept. Only while it is
asked for, once per burst of writes, never before the write is committed, never on the
thread."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from bonsai.daemon.state import Daemon
from bonsai.domain import Message
from bonsai.protocol import models as m
from bonsai.protocol.models import CtxGetResult
from bonsai.services.store.db import open_database
from bonsai.session import ctx_views, view_child, views
from bonsai.session.server_facts import ensure_facts
from bonsai.session.view_process import ViewProcess
from bonsai.session.views import Encoded, Named


def _daemon(tmp_path: Path) -> Daemon:
    db_path = tmp_path / "bonsai.db"
    return Daemon(tmp_path, open_database(db_path), db_path)


async def _until(check: Callable[[], bool], timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


def _labels(answer: Encoded) -> str:
    nodes = CtxGetResult.model_validate_json(answer.body).nodes or []
    return " | ".join(node.label for node in nodes)


@contextlib.asynccontextmanager
async def _ledger_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, process: str = "1"
) -> AsyncIterator[tuple[Daemon, str, Named, str]]:
    """A daemon, a session of one message, its ledger view and key; closed at the end."""
    monkeypatch.setenv("BONSAI_PROVIDER", "sim")
    monkeypatch.setenv("BONSAI_MODEL", "gpt-4o-mini")
    monkeypatch.setenv("BONSAI_VIEW_PROCESS", process)
    daemon = _daemon(tmp_path)
    sid = daemon.store.create(str(tmp_path)).session_id
    daemon.store.append(sid, Message(role="user", content="the first question"))
    await ensure_facts(daemon, sid)
    params = m.CtxGetParams(session_id=sid, view="ledger")
    view = Named("bonsai/ctx/get", params, ctx_views.answer)
    try:
        yield daemon, sid, view, f"ctx/get:{params.model_dump_json()}"
    finally:
        daemon.views.close()
        daemon.db.close()


async def _ready(daemon: Daemon, sid: str) -> ViewProcess:
    process = daemon.views._process_for(daemon, sid)
    assert process is not None
    assert await process.wait_ready(), process.status()
    return process


async def test_a_polled_ledger_is_computed_on_the_write_and_the_next_poll_finds_it_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with _ledger_open(tmp_path, monkeypatch) as (daemon, sid, view, key):
        process = await _ready(daemon, sid)
        first = await daemon.views.run(daemon, sid, view, key)
        assert "the first question" in _labels(first)
        eager, answered = daemon.views.eager, process.answered
        for n in range(3):  # one step's writes: one computation
            daemon.store.append(sid, Message(role="assistant", content=f"answer number {n}"))
        assert await _until(lambda: process.answered == answered + 1), "computed on the write"
        assert daemon.views.eager == eager + 1, "once for the three writes"
        polled = await daemon.views.run(daemon, sid, view, key)
        assert process.answered == answered + 1, "the poll was answered as kept"
        assert "answer number 2" in _labels(polled), "and it holds the new log"
        fresh = await daemon.views.run(daemon, sid, view)  # no key: computed now
        assert fresh.body == polled.body, "byte for byte what a fresh view gives"


async def test_a_view_no_longer_asked_for_is_not_computed_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(views, "WATCH_S", 0.2)
    async with _ledger_open(tmp_path, monkeypatch) as (daemon, sid, view, key):
        process = await _ready(daemon, sid)
        await daemon.views.run(daemon, sid, view, key)
        await asyncio.sleep(0.3)  # the ledger was closed
        answered = process.answered
        daemon.store.append(sid, Message(role="assistant", content="nobody looks"))
        await asyncio.sleep(0.3)
        assert process.answered == answered, "no computation for a ledger nobody polls"
        polled = await daemon.views.run(daemon, sid, view, key)
        assert "nobody looks" in _labels(polled), "the next poll computes it"


async def test_a_write_in_an_open_transaction_is_computed_only_once_committed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Computed before the commit, the view would hold the old log under the new version,
    and every poll would be served that stale answer as kept."""
    async with _ledger_open(tmp_path, monkeypatch) as (daemon, sid, view, key):
        process = await _ready(daemon, sid)
        await daemon.views.run(daemon, sid, view, key)
        answered = process.answered
        daemon.db.execute("BEGIN")
        daemon.store.append(sid, Message(role="assistant", content="committed later"))
        await asyncio.sleep(0.2)  # the refresh came and waited
        assert process.answered == answered, "nothing computed while the write is open"
        daemon.db.execute("COMMIT")
        daemon.store.set_state(sid, "note", "a write after the commit")  # wakes the refresh
        assert await _until(lambda: process.answered > answered), "computed after the commit"
        polled = await daemon.views.run(daemon, sid, view, key)
        assert "committed later" in _labels(polled)


async def test_the_thread_never_computes_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with _ledger_open(tmp_path, monkeypatch, process="0") as (daemon, sid, view, key):
        await daemon.views.run(daemon, sid, view, key)
        daemon.store.append(sid, Message(role="assistant", content="on the thread"))
        await asyncio.sleep(0.2)
        assert daemon.views.eager == 0, "the thread shares the loop's GIL: it waits for a poll"
        polled = await daemon.views.run(daemon, sid, view, key)
        assert "on the thread" in _labels(polled)


async def test_the_view_process_runs_behind_the_daemon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under load the kernel runs the loop that streams before the views' child."""
    async with _ledger_open(tmp_path, monkeypatch) as (daemon, sid, _, _):
        process = await _ready(daemon, sid)
        assert process.pid is not None
        ours = os.getpriority(os.PRIO_PROCESS, 0)
        assert os.getpriority(os.PRIO_PROCESS, process.pid) == min(19, ours + view_child.NICE)


async def test_a_failure_noting_a_write_never_fails_the_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with _ledger_open(tmp_path, monkeypatch) as (daemon, sid, view, key):
        await _ready(daemon, sid)
        await daemon.views.run(daemon, sid, view, key)

        def broken() -> None:
            raise RuntimeError("the refresh could not be scheduled")

        monkeypatch.setattr(daemon.views, "_schedule", broken)
        daemon.store.append(sid, Message(role="assistant", content="stored all the same"))
        polled = await daemon.views.run(daemon, sid, view, key)
        assert "stored all the same" in _labels(polled), "the write went through, the poll sees it"
