"""The daemon's side of the view process's pipe: frames read as they come, however the
pipe cuts them, each handed on inside the read (no task to wake per part); a frame that
cannot be read ends the pipe once; and a request that leaves while its view computes
does not take the view from the others waiting for it."""

from __future__ import annotations

import asyncio
import itertools
import threading
from pathlib import Path
from typing import Any

import pytest

from bonsai.daemon.state import Daemon
from bonsai.domain import Message
from bonsai.services.store.db import open_database
from bonsai.session.baseline import ensure_baseline
from bonsai.session.host import Host
from bonsai.session.view_process import FRAME, MAX_FRAME, _FrameReader, pack

FRAMES = [
    ({"id": 1, "ok": True}, b'{"view":"ledger","nodes":[]}'),
    ({"count": 7, "estimator": "tiktoken:o200k_base"}, '["déjà", "日本"]'.encode()),
    ({"id": 2, "ok": False, "error": "NotFound", "message": "no node"}, b""),
    ({"id": 3, "ok": True}, b"x" * 70_000),  # more than one default pipe's worth
]


def _reader() -> tuple[_FrameReader, list[tuple[dict[str, Any], bytes]], list[Any]]:
    got: list[tuple[dict[str, Any], bytes]] = []
    lost: list[Any] = []
    return _FrameReader(lambda h, b: got.append((h, b)), lost.append), got, lost


@pytest.mark.parametrize("step", [1, 7, 4096, 65_536, 1 << 20])
def test_frames_cut_anywhere_arrive_whole_and_in_order(step: int) -> None:
    reader, got, lost = _reader()
    stream = b"".join(pack(h, b) for h, b in FRAMES)
    cuts = list(range(0, len(stream), step))
    if step == 1:  # every byte alone is slow for 70 KB: every cut inside the small frames
        cuts = [*range(0, 300), *range(300, len(stream), 997)]
    for start, end in itertools.pairwise([*cuts, len(stream)]):
        reader.data_received(stream[start:end])
    assert got == FRAMES
    assert lost == [] and not reader.buffer
    reader.connection_lost(None)
    assert lost == [None], "the end of the pipe is told once"


def test_a_frame_too_large_ends_the_pipe_once_and_nothing_after_it_is_read() -> None:
    reader, got, lost = _reader()
    bad = FRAME.pack(MAX_FRAME + 1, 0)
    reader.data_received(pack(*FRAMES[0]) + bad + pack(*FRAMES[1]))
    assert got == [FRAMES[0]]
    assert len(lost) == 1 and "refused" in str(lost[0])
    reader.data_received(pack(*FRAMES[2]))
    reader.connection_lost(None)
    assert got == [FRAMES[0]] and len(lost) == 1


def test_a_header_that_is_not_json_ends_the_pipe() -> None:
    reader, got, lost = _reader()
    reader.data_received(FRAME.pack(3, 0) + b"{no")
    assert got == [] and len(lost) == 1


async def test_a_request_that_leaves_does_not_take_the_view_from_the_others(
    tmp_path: Path,
) -> None:
    db_path = tmp_path / "bonsai.db"
    daemon = Daemon(tmp_path, open_database(db_path), db_path)
    sid = daemon.store.create(str(tmp_path)).session_id
    await ensure_baseline(daemon, sid)
    daemon.store.append(sid, Message(role="user", content="first"))
    release = threading.Event()
    computed: list[int] = []

    def count(host: Host) -> int:
        release.wait(10)
        computed.append(1)
        return len(host.store.messages(sid))

    try:
        leaving = asyncio.ensure_future(daemon.views.run(daemon, sid, count, key="n"))
        staying = asyncio.ensure_future(daemon.views.run(daemon, sid, count, key="n"))
        await asyncio.sleep(0.05)
        leaving.cancel()  # the client went away, or cancelled its request
        await asyncio.sleep(0)
        release.set()
        assert await staying == 1, "the other request is answered"
        assert leaving.cancelled()
        assert await daemon.views.run(daemon, sid, count, key="n") == 1
        assert computed == [1], "one computation, kept for the next request"
    finally:
        daemon.views.close()
        daemon.db.close()
