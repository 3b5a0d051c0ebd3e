"""Views asked for together share one computation; the tokenizer is warmed before any view.

Two editors open on one session poll the same ledger: while one computation of it
runs, a second request for the same view of the same log waits for that one rather
than computing it again, and gets what a fresh view gives. A request made after the
log moved never gets the older answer.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from bonsai.daemon.state import Daemon
from bonsai.domain import Message
from bonsai.services.store.db import open_database
from bonsai.services.tokens import offline_tiktoken
from bonsai.session.base import bridge_for, tokenizer_warmer
from bonsai.session.baseline import ensure_baseline
from bonsai.session.host import Host


def _daemon(home: Path) -> Daemon:
    db_path = home / "bonsai.db"
    return Daemon(home, open_database(db_path), db_path)


async def _session(daemon: Daemon, home: Path) -> str:
    """A session whose git baseline is taken: a request then reaches the worker at once."""
    sid = daemon.store.create(str(home)).session_id
    await ensure_baseline(daemon, sid)
    return sid


async def test_requests_for_one_view_of_one_log_share_its_computation(tmp_path: Path) -> None:
    daemon = _daemon(tmp_path)
    sid = await _session(daemon, tmp_path)
    daemon.store.append(sid, Message(role="user", content="first"))
    release = threading.Event()
    computed: list[int] = []

    def count(host: Host) -> tuple[int, ...]:
        release.wait(10)  # held on the worker until both requests are in
        contents = tuple(len(s.message.content) for s in host.store.messages(sid))
        computed.append(len(contents))
        return contents

    first = asyncio.ensure_future(daemon.views.run(daemon, sid, count, key="lengths"))
    second = asyncio.ensure_future(daemon.views.run(daemon, sid, count, key="lengths"))
    await asyncio.sleep(0.05)
    release.set()
    a, b = await asyncio.gather(first, second)
    assert computed == [1], "one computation answered both requests"
    assert a == b == (5,)
    fresh = await daemon.views.run(daemon, sid, count)  # no key: computed afresh
    assert fresh == a, "the shared answer is what a fresh view gives"
    daemon.views.close()
    daemon.db.close()


async def test_a_request_after_a_write_does_not_share_a_computation_of_the_older_log(
    tmp_path: Path,
) -> None:
    daemon = _daemon(tmp_path)
    sid = await _session(daemon, tmp_path)
    daemon.store.append(sid, Message(role="user", content="first"))
    release = threading.Event()

    def count(host: Host) -> int:
        release.wait(10)
        return len(host.store.messages(sid))

    before = asyncio.ensure_future(daemon.views.run(daemon, sid, count, key="count"))
    await asyncio.sleep(0.05)  # the first computation is running (its snapshot not yet taken)
    daemon.store.append(sid, Message(role="assistant", content="second"))
    after = asyncio.ensure_future(daemon.views.run(daemon, sid, count, key="count"))
    await asyncio.sleep(0.05)
    release.set()
    assert await after == 2, "asked after the write: the write is seen"
    assert await before in (1, 2)  # its snapshot starts on the worker
    assert await daemon.views.run(daemon, sid, count, key="count") == 2
    daemon.views.close()
    daemon.db.close()


async def test_a_shared_view_that_fails_fails_every_request_and_the_next_one_computes_again(
    tmp_path: Path,
) -> None:
    daemon = _daemon(tmp_path)
    sid = await _session(daemon, tmp_path)
    release = threading.Event()
    calls: list[int] = []

    def broken(host: Host) -> int:
        release.wait(10)
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("the view broke")
        return len(host.store.messages(sid))

    runs = [asyncio.ensure_future(daemon.views.run(daemon, sid, broken, key="k")) for _ in "ab"]
    await asyncio.sleep(0.05)
    release.set()
    results = await asyncio.gather(*runs, return_exceptions=True)
    assert [type(r) for r in results] == [ValueError, ValueError]
    assert await daemon.views.run(daemon, sid, broken, key="k") == 0, "not kept: computed again"
    assert len(calls) == 2
    daemon.views.close()
    daemon.db.close()


async def test_the_warmed_tokenizer_is_the_one_the_first_view_counts_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BONSAI_MODEL", "gpt-4o-mini")  # a tiktoken encoding
    monkeypatch.setenv("BONSAI_PROVIDER", "sim")
    daemon = _daemon(tmp_path)  # its own home: its own rank-file cache, not loaded yet
    sid = daemon.store.create(str(tmp_path)).session_id
    daemon.store.append(sid, Message(role="user", content="hello"))
    before = offline_tiktoken.loads()
    daemon.views.warm(tokenizer_warmer(daemon))
    daemon.views.warm(lambda: 1 / 0)  # a failing warm-up is logged, the worker lives on
    await daemon.views.call(lambda: None)  # queued behind both on the one worker
    assert offline_tiktoken.loads() == before + 1, "the warm-up loaded the encoding"
    assert not daemon.hub.counters, "and built no session's counter"

    def tokens(host: Host) -> int:
        return bridge_for(host, sid).counter.count_text("count these words, please").tokens

    assert await daemon.views.run(daemon, sid, tokens) == 5
    assert offline_tiktoken.loads() == before + 1, "the view did not load it again"
    assert "gpt-4o-mini" in daemon.hub.counters, "the view built the session's counter"
    daemon.views.close()
    daemon.db.close()
