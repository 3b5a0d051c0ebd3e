"""The view process (``python -m bonsai.session.view_child HOME DB``): read-only views
in their own interpreter, one at a time, over the daemon's pipe.

It opens the database read-only and keeps its own caches (messages, memos, stable
parts, encoded rows), exactly as the view worker thread does; what only the daemon
knows comes with each request (:mod:`bonsai.session.view_process`), and its exact
token counts are asked of the daemon's tokenizer (:class:`Channel.counts`): it loads
none of its own. It reads frames
from stdin and writes answers to a private copy of stdout (fd 1 itself points at
stderr, so nothing printed can corrupt a frame), and exits at the end of its input:
when the daemon closes the pipe or dies.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

import apsw

from bonsai.agent.parts_cache import StablePartsCache
from bonsai.errors import BonsaiError
from bonsai.protocol import models as m
from bonsai.protocol.models import Wire
from bonsai.services.config import LoadedSettings, load_settings, validate
from bonsai.services.providers.discovery import ServerFacts
from bonsai.services.store.sessions import UnknownSession
from bonsai.services.tokens import TokenCounter, TokenizerUnavailable
from bonsai.services.tokens.calibration import CalibrationState
from bonsai.services.tokens.remote import RemoteCounting
from bonsai.session import ctx_views
from bonsai.session.host import Host
from bonsai.session.hub import SessionHub
from bonsai.session.view_process import Frame, pack, read_frame_sync
from bonsai.session.view_store import CachedStore, MessageCache
from bonsai.session.views import (
    BUSY_TIMEOUT_MS,
    FRESH_S,
    Encoded,
    ReadHost,
    ViewMutates,
)

log = logging.getLogger("bonsai.views.child")
# The child's niceness: under load the kernel runs the daemon (streaming) first. Views
# are mostly computed ahead of the polls (``views.WATCH_S``), so a poll rarely waits for
# this. 5: ctx/get p95 25-37 ms and streamed p95 13.7-16.6 ms with pollers; 0: 30-32 and
# 20.4-23.3 ms; 10: the child starved (ctx/get p95 133 ms), bench/load.py --polling.
NICE = 5

View = Callable[[Host, Any], Encoded]
VIEWS: dict[str, tuple[type[Wire], View]] = {
    "bonsai/ctx/get": (m.CtxGetParams, ctx_views.answer),
    "bonsai/ctx/text": (m.CtxNodeParams, ctx_views.text),
}


@dataclasses.dataclass(frozen=True)
class Peer:
    """A client attached to the session, as the daemon described it: nothing can be sent."""

    id: int
    kind: str
    name: str
    attached: set[str]

    def notify(self, method: str, params: Any) -> None:
        raise ViewMutates(f"a read-only view cannot send {method}")

    def notify_lsp(self, method: str, params: Any) -> None:
        raise ViewMutates(f"a read-only view cannot send {method}")

    async def request(self, method: str, params: Wire, timeout: float) -> Any:
        raise ViewMutates(f"a read-only view cannot ask {method}")

    async def request_lsp(self, method: str, params: Any, timeout: float) -> Any:
        raise ViewMutates(f"a read-only view cannot ask {method}")


class _Counters(dict[str, TokenCounter]):
    """The child's counters: one made for a model takes the daemon's calibration of it."""

    def __init__(self) -> None:
        super().__init__()
        self.states: dict[str, CalibrationState] = {}

    def __setitem__(self, model: str, counter: TokenCounter) -> None:
        state = self.states.get(model)
        if state is not None:
            counter.adopt_calibration(state)
        super().__setitem__(model, counter)

    def adopt(self, model: str, state: CalibrationState) -> None:
        self.states[model] = state
        if model in self:
            self[model].adopt_calibration(state)


class Channel:
    """The daemon's pipe (frames in and out) and the pipes of the token counts asked of
    it mid-view (``ask`` out, ``told`` in: answered by a thread of the daemon, never
    behind its event loop)."""

    def __init__(self, inp: IO[bytes], out: IO[bytes], ask: IO[bytes], told: IO[bytes]) -> None:
        self.inp, self.out = inp, out
        self.ask, self.told = ask, told
        self._asked = 0
        self.marks: list[tuple[str, float]] | None = None  # a traced view's count questions

    def send(self, header: dict[str, Any], body: bytes = b"") -> None:
        self.out.write(pack(header, body))
        self.out.flush()

    def next(self) -> Frame | None:
        return read_frame_sync(self.inp)

    def counts(self, estimator: str, texts: Sequence[str]) -> list[int]:
        """The daemon's exact counts of ``texts`` by its estimator ``estimator``."""
        self._asked += 1
        ident = self._asked
        if self.marks is not None:
            self.marks.append(("count_asked", time.time()))
        self.ask.write(
            pack({"count": ident, "estimator": estimator}, json.dumps(list(texts)).encode())
        )
        self.ask.flush()
        while True:
            frame = read_frame_sync(self.told)
            if frame is None:  # the daemon went away mid-view: the view process ends
                raise EOFError("the daemon closed the view process's count answers")
            head, body = frame
            if head.get("counted") == ident:
                break  # (an answer to an earlier question, given up on, is passed over)
        if self.marks is not None:
            self.marks.append(("count_answered", time.time()))
        if not head.get("ok"):
            raise TokenizerUnavailable(str(head.get("message", "the daemon cannot count")))
        return [int(n) for n in json.loads(body)]


class Child:
    """The daemon's state as the views need it, kept between requests."""

    def __init__(self, home: Path, db_path: Path, channel: Channel) -> None:
        self.home, self.db_path, self.channel = home, db_path, channel
        self.conn = apsw.Connection(str(db_path), flags=apsw.SQLITE_OPEN_READONLY)
        self.conn.setbusytimeout(BUSY_TIMEOUT_MS)
        self.conn.execute("PRAGMA foreign_keys = ON")
        self.messages = MessageCache()
        self.counters = _Counters()
        self.hub = SessionHub(
            counters=self.counters,
            stable_parts=StablePartsCache(FRESH_S),
            counting=RemoteCounting(channel.counts),  # no tokenizer of its own
        )
        self.loaded: dict[str | None, LoadedSettings] = {}

    def settings(self, workspace: str | None = None) -> LoadedSettings:
        loaded = self.loaded.get(workspace)
        if loaded is None:  # not sent (the daemon had not loaded it): from disk, as it would
            loaded = self.loaded[workspace] = load_settings(
                self.home, Path(workspace) if workspace else None
            )
        return loaded

    def host(self, subscribers: dict[str, list[Any]], edits: dict[str, int]) -> ReadHost:
        store = CachedStore(self.conn, self.messages, edits)
        return ReadHost(self.home, self.conn, store, self.hub, self.settings, subscribers)

    def sync(self, head: dict[str, Any]) -> None:
        """Take what the daemon sent of its memory (only what changed comes)."""
        session = str(head["session"])
        for workspace, snapshot in head.get("settings", []):
            overrides = snapshot["overrides"]
            settings = validate(overrides, "settings", [])
            self.loaded[workspace] = LoadedSettings(settings, overrides, list(snapshot["problems"]))
        if "client" in head:
            client = head["client"]
            if client is None:
                self.hub.client_settings.pop(session, None)
            else:
                self.hub.client_settings[session] = m.ClientSettings.model_validate(client)
        if "repomap" in head:
            self.hub.repomap_text[session] = head["repomap"]
        if "facts" in head:
            cache = self.hub.server_facts
            for url, model, facts in head["facts"]:
                cache.put(url, model, ServerFacts.model_validate(facts))
        for model, text in head.get("calibration", {}).items():
            self.counters.adopt(model, CalibrationState.model_validate_json(text))

    def answer(self, head: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        ident = head["id"]
        started = time.time()
        marks = self.channel.marks = [] if head.get("trace") else None
        try:
            self.sync(head)
            params_type, view = VIEWS[str(head["method"])]
            params = params_type.model_validate(head["params"])
            session = str(head["session"])
            peers = [Peer(int(i), str(k), str(n), set(a)) for i, k, n, a in head["subscribers"]]
            edits = {} if head.get("edits") is None else {session: int(head["edits"])}
            host = self.host({session: peers}, edits)
            with self.conn:  # one transaction: every read of this view sees the same log
                result = view(host, params)
        except (BonsaiError, UnknownSession) as error:
            return _failed(ident, error, getattr(error, "message", str(error))), b""
        except Exception as error:  # the daemon asks its thread, which logs the trace too
            log.warning("view %s failed in the view process", head.get("method"), exc_info=True)
            return _failed(ident, error, str(error)), b""
        finally:
            self.channel.marks = None
        out: dict[str, Any] = {"id": ident, "ok": True}
        if marks is not None:  # a traced request (request_trace): when this took place
            read = head.get("_read", started)
            out["marks"] = [("child_read", read), ("child_start", started), *marks]
            out["marks"].append(("child_end", time.time()))
        return out, result.body

    def forget(self, session_id: str) -> None:
        self.hub.memos.pop(session_id, None)
        self.hub.repomap_text.pop(session_id, None)
        self.hub.client_settings.pop(session_id, None)
        self.messages.forget(session_id)


def _failed(ident: object, error: Exception, message: str) -> dict[str, Any]:
    return {"id": ident, "ok": False, "error": type(error).__name__, "message": message}


def serve(child: Child) -> None:
    channel = child.channel
    channel.send({"ready": True, "pid": os.getpid()})
    while True:
        frame = channel.next()
        if frame is None:
            return
        head, _ = frame
        head["_read"] = time.time()
        if "forget" in head:
            child.forget(str(head["forget"]))
            continue
        answer, body = child.answer(head)
        channel.send(answer, body)


def main(argv: list[str]) -> int:
    home, db_path = Path(argv[1]), Path(argv[2])
    os.nice(NICE)  # behind the daemon's loop: a streamed event is never queued behind a view
    logging.basicConfig(level=logging.WARNING, format="view process: %(levelname)s %(message)s")
    out = os.fdopen(os.dup(1), "wb")  # the frames' own channel
    os.dup2(2, 1)  # anything printed goes to stderr, never into a frame
    inp = os.fdopen(os.dup(0), "rb")
    ask_fd, told_fd = (int(fd) for fd in argv[3].split(","))  # the count questions' pipes
    ask, told = os.fdopen(ask_fd, "wb"), os.fdopen(told_fd, "rb")
    try:
        serve(Child(home, db_path, Channel(inp, out, ask, told)))
    except (BrokenPipeError, EOFError, KeyboardInterrupt):
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
