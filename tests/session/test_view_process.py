"""Views in their own process: the same bytes as the worker thread and the whole-model
oracle, what the daemon holds in memory reaches the child, a child killed or hung
still answers (on the thread), and the daemon's stop leaves no child behind."""

from __future__ import annotations

import asyncio
import os
import random
import signal
from functools import partial
from pathlib import Path
from typing import Any, cast

import pytest

from bonsai.daemon.handlers import ctx as handlers
from bonsai.daemon.rpc import Ctx
from bonsai.daemon.state import Daemon
from bonsai.dev.tree_rss import children_running
from bonsai.domain import Message
from bonsai.protocol import models as m
from bonsai.protocol.models import CtxGetResult
from bonsai.services.store.db import open_database
from bonsai.session import ctx_views
from bonsai.session.host import Host
from bonsai.session.server_facts import ensure_facts
from bonsai.session.view_process import ViewProcess
from bonsai.session.views import Encoded, Named
from bonsai_testing import BONSAI, bonsai_env, close_client, rpc, start_client, stop_daemon
from ctx_oracle import random_step, whole_view

VIEWS = ("ledger", "wire", "turns")


@pytest.fixture(autouse=True)
def _view_process_from_the_first_view(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests drive the child from the first view (by default it waits for
    ``AUTO_CLIENTS`` connected clients; that rule has its own test below)."""
    monkeypatch.setenv("BONSAI_VIEW_PROCESS", "1")


ALWAYS = {"BONSAI_VIEW_PROCESS": "1"}


def _daemon(tmp_path: Path) -> Daemon:
    db_path = tmp_path / "bonsai.db"
    return Daemon(tmp_path, open_database(db_path), db_path)


async def _process(daemon: Daemon) -> ViewProcess:
    process = daemon.views._process_for(daemon)
    assert process is not None, "the view process is on (BONSAI_VIEW_PROCESS=1, the fixture)"
    assert await process.wait_ready(), process.status()
    return process


async def _three(daemon: Daemon, sid: str, view: str) -> tuple[bytes, bytes, bytes]:
    """The child's answer, the thread's, the oracle's."""
    params = m.CtxGetParams(session_id=sid, view=view)  # type: ignore[arg-type]
    process = daemon.views.process
    assert process is not None
    answered = process.answered
    child = await daemon.views.run(daemon, sid, Named("bonsai/ctx/get", params, handlers._answer))
    assert process.answered == answered + 1, "the child answered"

    def thread(host: Host) -> tuple[bytes, bytes]:
        return handlers._answer(host, params).body, Encoded.of(whole_view(host, params)).body

    by_thread, whole = await daemon.views.run(daemon, sid, thread)
    return child.body, by_thread, whole


async def _ledger(daemon: Daemon, sid: str) -> bytes:
    return (await _three(daemon, sid, "ledger"))[0]


@pytest.mark.parametrize("seed", [3])
async def test_the_child_answers_byte_for_byte_as_the_thread_and_the_oracle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    monkeypatch.setenv("BONSAI_PROVIDER", "sim")
    monkeypatch.setenv("BONSAI_MODEL", "gpt-4o-mini")
    daemon = _daemon(tmp_path)
    sid = daemon.store.create(str(tmp_path)).session_id
    await ensure_facts(daemon, sid)
    await _process(daemon)
    rng = random.Random(seed)
    ctx = Ctx(daemon, cast(Any, None), cast(Any, None))
    acted: set[str] = set()
    try:
        for step in range(24):
            state = await random_step(daemon, ctx, sid, rng, step, partial(_ledger, daemon, sid))
            if state is not None:
                acted.add(state)
            if step == 12:  # what lives only in the daemon's memory reaches the child
                daemon.hub.repomap_text[sid] = "## Repository map\nsrc/app.py: main()"
                daemon.hub.client_settings[sid] = m.ClientSettings(model="gpt-4o")
            for view in VIEWS:
                child, thread, whole = await _three(daemon, sid, view)
                assert child == thread == whole, f"step {step}, {view} view"
        wire = CtxGetResult.model_validate_json((await _three(daemon, sid, "wire"))[0])
        assert "src/app.py: main()" in str(wire.messages), "the repository map is in the child"
        assert acted - {"full"}, "the actions changed some row's state"
    finally:
        daemon.views.close()
        daemon.db.close()


async def test_settings_the_daemon_holds_are_the_childs_after_the_file_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BONSAI_PROVIDER", "sim")
    monkeypatch.setenv("BONSAI_MODEL", "gpt-4o-mini")
    (tmp_path / "config.json").write_text('{"context": {"output_reserve_fraction": 0.1}}')
    daemon = _daemon(tmp_path)
    sid = daemon.store.create(str(tmp_path)).session_id
    daemon.store.append(sid, Message(role="user", content="hello"))
    await ensure_facts(daemon, sid)
    await _process(daemon)
    try:
        before = await _three(daemon, sid, "ledger")
        assert before[0] == before[1]
        reserve = CtxGetResult.model_validate_json(before[0]).totals.reserve
        # edited on disk: the daemon reads the file again (its identity moved) and the
        # child, which never reads config files itself, follows the daemon's settings
        (tmp_path / "config.json").write_text('{"context": {"output_reserve_fraction": 0.3}}')
        daemon.store.append(sid, Message(role="user", content="again"))
        child, thread, _ = await _three(daemon, sid, "ledger")
        assert child == thread
        assert CtxGetResult.model_validate_json(child).totals.reserve != reserve
        daemon.reload_settings()  # an explicit reload: still the daemon's, still agreed
        daemon.store.append(sid, Message(role="user", content="after the reload"))
        again, thread, _ = await _three(daemon, sid, "ledger")
        assert again == thread
        assert (
            CtxGetResult.model_validate_json(again).totals.reserve
            == CtxGetResult.model_validate_json(child).totals.reserve
        )
    finally:
        daemon.views.close()
        daemon.db.close()


async def test_a_killed_child_loses_no_view_and_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("BONSAI_PROVIDER", "sim")
    daemon = _daemon(tmp_path)
    sid = daemon.store.create(str(tmp_path)).session_id
    daemon.store.append(sid, Message(role="user", content="hello"))
    await ensure_facts(daemon, sid)
    process = await _process(daemon)
    params = m.CtxGetParams(session_id=sid, view="ledger")
    try:
        first = process.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        daemon.store.append(sid, Message(role="user", content="while it was dead"))
        answer = await daemon.views.run(
            daemon, sid, Named("bonsai/ctx/get", params, ctx_views.answer)
        )
        nodes = CtxGetResult.model_validate_json(answer.body).nodes or []
        assert any("while it was dead" in n.label for n in nodes), "answered, with the append"
        assert any("view process" in r.getMessage() for r in caplog.records), "logged"
        assert await process.wait_ready(), "a new child starts"
        assert process.pid not in (None, first)
        child, thread, _ = await _three(daemon, sid, "ledger")
        assert child == thread
    finally:
        daemon.views.close()
        daemon.db.close()
    assert _gone(first)


async def test_a_hung_child_times_out_and_the_thread_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("BONSAI_PROVIDER", "sim")
    daemon = _daemon(tmp_path)
    sid = daemon.store.create(str(tmp_path)).session_id
    daemon.store.append(sid, Message(role="user", content="hello"))
    process = await _process(daemon)
    process.timeout_s = 1.0
    params = m.CtxGetParams(session_id=sid, view="ledger")
    hung = process.pid
    assert hung is not None
    os.kill(hung, signal.SIGSTOP)  # alive, never answers
    try:
        answer = await daemon.views.run(
            daemon, sid, Named("bonsai/ctx/get", params, ctx_views.answer)
        )
        assert CtxGetResult.model_validate_json(answer.body).nodes, "answered on the thread"
        assert any("did not answer" in r.getMessage() for r in caplog.records)
        assert _gone(hung), "the hung child was killed"
    finally:
        daemon.views.close()
        daemon.db.close()


def _gone(pid: int) -> bool:
    """The process has exited (a zombie not yet reaped by its new parent counts)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


async def test_errors_in_the_child_are_the_users_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BONSAI_PROVIDER", "sim")
    daemon = _daemon(tmp_path)
    sid = daemon.store.create(str(tmp_path)).session_id
    daemon.store.append(sid, Message(role="user", content="hello"))
    process = await _process(daemon)
    ctx = Ctx(daemon, cast(Any, None), cast(Any, None))
    try:
        with pytest.raises(Exception) as raised:
            await handlers.text(ctx, m.CtxNodeParams(session_id=sid, node_id="no-such-node"))
        assert type(raised.value).__name__ == "NotFound"
        assert "no-such-node" in str(raised.value)
        assert process.answered == 0, "an error is not an answer"
        ledger = CtxGetResult.model_validate_json((await _three(daemon, sid, "ledger"))[0])
        node = next(n for n in ledger.nodes or [] if n.section == "messages")
        text = await handlers.text(ctx, m.CtxNodeParams(session_id=sid, node_id=node.id))
        assert text.dump()["text"] == "hello"
    finally:
        daemon.views.close()
        daemon.db.close()


async def test_closing_the_views_reaps_the_child(tmp_path: Path) -> None:
    daemon = _daemon(tmp_path)
    process = await _process(daemon)
    pid = process.pid
    assert pid is not None and not _gone(pid)
    daemon.views.close()
    await asyncio.sleep(0)
    assert _gone(pid), "no child left after close"
    daemon.db.close()


def _view_children(pid: int) -> list[int]:
    """The daemon's view processes, from /proc."""
    return children_running(pid, "bonsai.session.view_child")


async def _until(predicate: Any, timeout: float = 120.0) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert asyncio.get_running_loop().time() < deadline, "timed out waiting"
        await asyncio.sleep(0.1)


async def _until_running(client: Any, says: str) -> str:
    """What ``bonsai/daemon/status`` says of the views, once it says ``says``."""
    deadline = asyncio.get_running_loop().time() + 120
    while True:
        views = str((await rpc(client, "bonsai/daemon/status"))["views"])
        if says in views:
            return views
        assert asyncio.get_running_loop().time() < deadline, views
        await asyncio.sleep(0.1)


async def test_over_the_wire_a_pin_shows_to_another_client_a_killed_child_still_answers_and_stop_reaps_it(
    home: Path,
) -> None:
    env = bonsai_env(home, BONSAI_PROVIDER="sim", BONSAI_MODEL="gpt-4o-mini", **ALWAYS)
    a, b = await asyncio.gather(
        start_client([*BONSAI, "connect"], env), start_client([*BONSAI, "connect"], env)
    )
    try:
        pid = (await rpc(a, "bonsai/daemon/status"))["pid"]
        sid = (await rpc(a, "bonsai/session/create", {"workspace": str(home)}))["sessionId"]
        for n in range(6):
            role = "user" if n % 2 == 0 else "assistant"
            await rpc(
                a, "bonsai/session/append", {"sessionId": sid, "role": role, "content": f"m{n}"}
            )
        get = {"sessionId": sid, "view": "ledger"}
        first = await rpc(b, "bonsai/ctx/get", get)  # starts the view process
        child = (await _until(lambda: _view_children(pid)))[0]
        await _until_running(a, f"running (pid {child})")
        node = next(n for n in first["nodes"] if n["section"] == "messages")["id"]
        await rpc(a, "bonsai/ctx/pin", {"sessionId": sid, "nodeId": node})
        shown = await rpc(b, "bonsai/ctx/get", get)
        assert next(n for n in shown["nodes"] if n["id"] == node)["state"] == "pinned"

        async def poll(n: int) -> list[str]:
            states = []
            for _ in range(n):
                answer = await rpc(b, "bonsai/ctx/get", get)
                states.append(next(x for x in answer["nodes"] if x["id"] == node)["state"])
                await asyncio.sleep(0.02)
            return states

        polling = asyncio.ensure_future(poll(30))
        await asyncio.sleep(0.2)
        os.kill(child, signal.SIGKILL)  # mid-poll
        await rpc(a, "bonsai/session/append", {"sessionId": sid, "role": "user", "content": "m6"})
        assert await polling == ["pinned"] * 30, "every poll answered, right, through the death"
        after = await rpc(b, "bonsai/ctx/get", get)
        assert any("m6" in n["label"] for n in after["nodes"]), "the append shows"
        again = (await _until(lambda: [c for c in _view_children(pid) if c != child]))[0]
        assert _gone(child) and not _gone(again), "a new view process replaced it"
        views = await _until_running(a, f"running (pid {again}; restarted 1×")
        assert "exited with code -9" in views, "bonsai status says what happened"
    finally:
        await asyncio.gather(close_client(a), close_client(b))
    stop_daemon(home)
    await _until(lambda: _gone(pid), timeout=30)
    assert _gone(again), "the daemon's stop leaves no view process"


async def test_a_daemon_killed_with_sigkill_leaves_no_view_process(home: Path) -> None:
    env = bonsai_env(home, BONSAI_PROVIDER="sim", BONSAI_MODEL="gpt-4o-mini", **ALWAYS)
    client = await start_client([*BONSAI, "connect"], env)
    try:
        pid = (await rpc(client, "bonsai/daemon/status"))["pid"]
        sid = (await rpc(client, "bonsai/session/create", {"workspace": str(home)}))["sessionId"]
        await rpc(
            client, "bonsai/session/append", {"sessionId": sid, "role": "user", "content": "x"}
        )
        await rpc(client, "bonsai/ctx/get", {"sessionId": sid})
        child = (await _until(lambda: _view_children(pid)))[0]
        await _until_running(client, f"running (pid {child})")
        os.kill(pid, signal.SIGKILL)  # no stop, no cleanup: the child sees its input end
        await _until(lambda: _gone(child), timeout=30)
    finally:
        await close_client(client)


async def test_by_default_one_editor_gets_no_view_process_and_a_third_client_starts_it(
    home: Path,
) -> None:
    env = bonsai_env(home, BONSAI_PROVIDER="sim", BONSAI_MODEL="gpt-4o-mini")  # no override
    a = await start_client([*BONSAI, "connect"], env)
    others: list[Any] = []
    try:
        pid = (await rpc(a, "bonsai/daemon/status"))["pid"]
        sid = (await rpc(a, "bonsai/session/create", {"workspace": str(home)}))["sessionId"]
        await rpc(a, "bonsai/session/append", {"sessionId": sid, "role": "user", "content": "m"})
        get = {"sessionId": sid, "view": "ledger"}
        alone = await rpc(a, "bonsai/ctx/get", get)
        assert alone["nodes"], "one editor's ledger is answered (on the thread)"
        views = str((await rpc(a, "bonsai/daemon/status"))["views"])
        assert "worker thread" in views and not _view_children(pid), views
        others = list(
            await asyncio.gather(*(start_client([*BONSAI, "connect"], env) for _ in range(2)))
        )
        await rpc(a, "bonsai/session/append", {"sessionId": sid, "role": "user", "content": "n"})
        shown = await rpc(others[0], "bonsai/ctx/get", get)
        assert len(shown["nodes"]) > len(alone["nodes"]), "the new message shows"
        child = (await _until(lambda: _view_children(pid)))[0]
        await _until_running(a, f"running (pid {child})")
    finally:
        await asyncio.gather(*(close_client(c) for c in [a, *others]))
    stop_daemon(home)
    await _until(lambda: _gone(pid), timeout=30)


async def test_two_sessions_have_two_children_and_one_stuck_child_holds_up_only_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BONSAI_PROVIDER", "sim")
    monkeypatch.setenv("BONSAI_MODEL", "gpt-4o-mini")
    daemon = _daemon(tmp_path)
    sids = [daemon.store.create(str(tmp_path)).session_id for _ in range(3)]
    for n, sid in enumerate(sids):
        daemon.store.append(sid, Message(role="user", content=f"session {n}"))
        await ensure_facts(daemon, sid)
    lanes = [daemon.views._process_for(daemon, sid) for sid in sids]
    first, second, third = (p for p in lanes if p is not None)
    try:
        assert first is not second, "a second session polled has a child of its own"
        assert third is first, "a third shares the lane with the fewest sessions"
        assert await first.wait_ready() and await second.wait_ready()
        assert first.pid != second.pid
        views = [
            Named("bonsai/ctx/get", m.CtxGetParams(session_id=sid, view="ledger"), ctx_views.answer)
            for sid in sids
        ]
        answers = await asyncio.gather(
            *(daemon.views.run(daemon, s, v) for s, v in zip(sids, views, strict=True))
        )
        for n, answer in enumerate(answers):
            nodes = CtxGetResult.model_validate_json(answer.body).nodes or []
            assert any(f"session {n}" in node.label for node in nodes), "each its own session"
        assert (first.answered, second.answered) == (2, 1), "each session's views in its lane"
        stuck = first.pid
        assert stuck is not None
        os.kill(stuck, signal.SIGSTOP)  # alive, never answers: its sessions wait for it
        try:
            daemon.store.append(sids[1], Message(role="user", content="while the other hung"))
            answer = await asyncio.wait_for(daemon.views.run(daemon, sids[1], views[1]), 10)
            nodes = CtxGetResult.model_validate_json(answer.body).nodes or []
            assert any("while the other hung" in node.label for node in nodes)
            assert second.answered == 2, "answered by its own child, not behind the stuck one"
        finally:
            os.kill(stuck, signal.SIGCONT)
        status = daemon.views.status()
        assert f"pid {first.pid}" in status and f"pid {second.pid}" in status, status
        pids = [first.pid, second.pid]
    finally:
        daemon.views.close()
        daemon.db.close()
    assert all(pid is not None and _gone(pid) for pid in pids), "close reaps both children"
