"""The tiktoken encoding is loaded once per process, not per view or per counter.

Loading one reads and hashes a ~3.6 MB rank file and builds the BPE tables (seconds on
a busy machine): a view that did it again would hold every poller of the worker."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from bonsai.daemon.state import Daemon
from bonsai.domain import Message
from bonsai.services.store.db import open_database
from bonsai.services.tokens import TokenCounter, offline_tiktoken
from bonsai.session.base import bridge_for
from bonsai.session.host import Host


def _daemon(home: Path) -> Daemon:
    db_path = home / "bonsai.db"
    return Daemon(home, open_database(db_path), db_path)


def _count(sid: str) -> Callable[[Host], tuple[int, TokenCounter]]:
    def view(host: Host) -> tuple[int, TokenCounter]:
        counter = bridge_for(host, sid).counter
        return counter.count_text("count these words, please").tokens, counter

    return view


async def test_a_second_view_and_a_second_daemon_count_without_loading_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BONSAI_MODEL", "gpt-4o-mini")  # an exact tiktoken count
    monkeypatch.setenv("BONSAI_PROVIDER", "sim")
    daemon = _daemon(tmp_path)
    sid = daemon.store.create(str(tmp_path)).session_id
    daemon.store.append(sid, Message(role="user", content="hello"))
    before = offline_tiktoken.loads()

    tokens, counter = await daemon.views.run(daemon, sid, _count(sid))
    assert tokens == 5
    assert offline_tiktoken.loads() == before + 1, "this home's cache: loaded once"
    again, same = await daemon.views.run(daemon, sid, _count(sid))
    assert again == 5 and same is counter, "the second view counts with the same counter"
    on_loop = bridge_for(daemon, sid).counter
    assert on_loop is counter, "a turn on the loop and a view share the model's counter"

    # a second daemon in this process (its own hub, so its own counter): the same encoding
    second = _daemon(tmp_path)
    third, other = await second.views.run(second, sid, _count(sid))
    assert third == 5 and other is not counter
    assert offline_tiktoken.loads() == before + 1, "no encoding was loaded again"
    assert other.estimator.encoding is counter.estimator.encoding  # type: ignore[attr-defined]
    daemon.views.close()
    second.views.close()
    daemon.db.close()
    second.db.close()
