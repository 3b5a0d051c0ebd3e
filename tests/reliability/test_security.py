"""Hostile files and security boundaries, proven against a real daemon.

Hostile files reach the daemon the way they would in use: through agent turns
against the provider simulator (steering files, a binary read, 100 MB of tool
output) or through the memory methods (a corrupt entry). Each gives a clear
message and the turn completes.

Security: a process of another uid cannot reach the daemon, even with the
socket made world-accessible (the peer-credential check closes it unanswered);
a secret a tool printed cannot be read back through ``read_tool_output``,
recall, the ledger or the database; an API key never reaches the log, even
when the provider echoes it in its error. (Socket modes and the TCP token are
tested in tests/daemon/test_shared_daemon.py and tests/foundation/test_tcp.py.)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from bonsai.cli.client import DaemonClient
from bonsai.sim import Script
from bonsai.sim.faults import Fault
from bonsai.sim.runner import SimulatorThread
from bonsai.sim.script import Reply, ToolCallSpec
from bonsai_testing import bonsai_env
from reliability.raw_client import DaemonProcess, Raw

# Fake credentials in the shapes the redaction patterns know; never real.
TOOL_SECRET = "sk-proj-" + "Zq7XbW" * 8
API_KEY = "sk-" + "Fk9Lm2Np" * 6
RSS_LIMIT_MB = 400
HUNDRED_MB = 100_000_000


def call(name: str, call_id: str, **arguments: Any) -> ToolCallSpec:
    return ToolCallSpec(name=name, arguments=dict(arguments), id=call_id)


@dataclass
class TurnRig:
    """One daemon on a unix socket, its simulator, and a CLI client attached."""

    home: Path
    sim: SimulatorThread
    daemon: DaemonProcess
    client: DaemonClient
    events: list[dict[str, Any]] = field(default_factory=list)

    def session(self, workspace: Path) -> str:
        sid: str = self.client.request("bonsai/session/create", {"workspace": str(workspace)})[
            "sessionId"
        ]
        self.client.request("bonsai/session/attach", {"sessionId": sid})
        return sid

    def turn(self, sid: str, text: str, timeout: float = 90.0) -> list[dict[str, Any]]:
        """Send one message; return the turn's events once it is done or failed."""
        turn_id = self.client.request("bonsai/chat/send", {"sessionId": sid, "text": text})[
            "turnId"
        ]
        deadline = time.monotonic() + timeout
        while not self._ended(turn_id):
            assert time.monotonic() < deadline, f"turn {turn_id} did not end in {timeout:.0f}s"
            self.client.pump()
        return [e for e in self.events if e["turnId"] == turn_id]

    def _ended(self, turn_id: str) -> bool:
        return any(e["turnId"] == turn_id and e["kind"] in ("done", "error") for e in self.events)

    def sent_to_model(self) -> str:
        return json.dumps([r.body for r in self.sim.requests])


@contextmanager
def turn_rig(root: Path, script: Script, **env: str) -> Iterator[TurnRig]:
    home = root / "home"
    home.mkdir()
    policy = {"tools": {"policy": {"bash": "allow"}}}
    (home / "config.json").write_text(json.dumps(policy))
    with SimulatorThread(script) as sim:
        settings = {
            "BONSAI_PROVIDER": "sim",
            "BONSAI_BASE_URL": sim.openai_base_url,
            "BONSAI_MODEL": "gpt-4o-mini",
            "BONSAI_MEMORY_EMBEDDINGS": "off",
            **env,
        }
        daemon = DaemonProcess(home, bonsai_env(home, **settings), cwd=root)
        client = DaemonClient.connect(home, start=False)
        client.sock.settimeout(120)
        rig = TurnRig(home, sim, daemon, client)
        client.on_notification = lambda method, params: (
            rig.events.append(params) if method == "bonsai/chat/event" else None
        )
        try:
            yield rig
        finally:
            client.close()
            assert daemon.stop() == 0


def workspace(root: Path, files: dict[str, bytes]) -> Path:
    ws = root / "ws"
    ws.mkdir()
    for name, data in files.items():
        path = ws / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return ws


def kinds(events: list[dict[str, Any]]) -> list[str]:
    return [e["kind"] for e in events]


def tool_result(events: list[dict[str, Any]], call_id: str) -> dict[str, Any]:
    """The streamed result event (its text is a preview of the stored one)."""
    return next(e for e in events if e["kind"] == "toolResult" and e["toolCallId"] == call_id)


def stored_result(rig: TurnRig, sid: str, call_id: str) -> str:
    """The tool result as the session log keeps it (what the model is sent)."""
    log = rig.client.request("bonsai/session/attach", {"sessionId": sid})["messages"]
    content: str = next(m["content"] for m in log if m.get("toolCallId") == call_id)
    return content


# ------------------------------------------------------------------ hostile files
def test_hostile_steering_files_are_shown_with_notes(tmp_path: Path) -> None:
    bad = b"# Rules\nIndent with tabs \xff\xfe and \xc3\x28 here.\n"
    huge = b"".join(b"- rule %06d: keep functions short\n" % i for i in range(30_000))
    assert len(huge) > 1_000_000
    ws = workspace(tmp_path, {"AGENTS.md": bad, "CLAUDE.md": huge})
    with turn_rig(tmp_path, Script(steps=[Reply(text="Noted.")])) as rig:
        events = rig.turn(rig.session(ws), "hello")
        sent = rig.sent_to_model()
    assert kinds(events)[-1] == "done", events
    assert "Indent with tabs" in sent
    assert "AGENTS.md is not valid UTF-8" in sent, "bad bytes get a visible note"
    assert "CLAUDE.md is truncated" in sent and "rule 029999" not in sent
    assert len(sent) < 200_000, "a 1 MB steering file is capped, not sent whole"
    assert (ws / "AGENTS.md").read_bytes() == bad


def test_binary_file_read_is_a_clear_tool_error(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"blob.bin": bytes(range(256)) * 400})
    script = Script(
        steps=[
            Reply(tool_calls=[call("read_file", "read-blob", path="blob.bin")]),
            Reply(text="It is binary."),
        ]
    )
    with turn_rig(tmp_path, script) as rig:
        events = rig.turn(rig.session(ws), "what is in blob.bin?")
    assert kinds(events)[-1] == "done", events
    result = tool_result(events, "read-blob")
    assert result["isError"] and "blob.bin is a binary file (102400 bytes)" in result["result"]


def test_hundred_megabyte_tool_output_is_capped_end_to_end(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {})
    command = f"yes 0123456789abcdef | head -c {HUNDRED_MB}"
    script = Script(
        steps=[
            Reply(tool_calls=[call("bash", "big", command=command)]),
            Reply(tool_calls=[call("read_tool_output", "page", id="big", offset=0, limit=500)]),
            Reply(text="That was long."),
        ]
    )
    with turn_rig(tmp_path, script) as rig:
        sid = rig.session(ws)
        events = rig.turn(sid, "print a lot")
        big = stored_result(rig, sid, "big")
        peak = rig.daemon.peak_rss_mb()
        db = sqlite3.connect(rig.home / "bonsai.db")
        [(spilled,)] = db.execute("SELECT content FROM tool_outputs").fetchall()
        logged = db.execute("SELECT max(length(body)) FROM messages WHERE role = 'tool'").fetchone()
        db.close()
    assert kinds(events)[-1] == "done", events
    assert len(big) < 26_000 and "read_tool_output" in big
    total = int(re.search(r"characters omitted of (\d+);", big).group(1))  # type: ignore[union-attr]
    assert total < 2_200_000, "only the first and last MiB of 100 MB were captured"
    assert "bytes of output dropped" in spilled and len(spilled) <= 2 * 1024 * 1024
    page = tool_result(events, "page")["result"]
    assert page.startswith("[characters 0..500 of ") and "0123456789abcdef" in page
    assert logged[0] < 30_000, "the log keeps the truncated result only"
    assert peak < RSS_LIMIT_MB, f"daemon peak RSS {peak:.0f} MB"


def test_corrupt_memory_file_is_an_issue_and_left_untouched(tmp_path: Path) -> None:
    corrupt = b"---\nname: [unclosed\ndescription: \xff\xfe\x00\n---\nbody\n"
    ws = workspace(tmp_path, {".bonsai/memory/broken-entry.md": corrupt})
    with turn_rig(tmp_path, Script(steps=[Reply(text="ok")])) as rig:
        listed = rig.client.request("bonsai/memory/list", {"workspace": str(ws)})
        events = rig.turn(rig.session(ws), "remember anything?")
        again = rig.client.request("bonsai/memory/list", {"workspace": str(ws)})
    [issue] = [i for i in listed["issues"] if "broken-entry.md" in i]
    assert len(issue) > len(str(ws)) + 20, f"the issue says what is wrong: {issue}"
    assert kinds(events)[-1] == "done", events
    assert again["issues"] == listed["issues"]
    assert (ws / ".bonsai/memory/broken-entry.md").read_bytes() == corrupt


# ------------------------------------------------------------------ security
NOBODY_CLIENT = """
import json, socket, sys
sock = socket.socket(socket.AF_UNIX)
sock.settimeout(10)
try:
    sock.connect(sys.argv[1])
except OSError as error:
    print(json.dumps({"connected": False, "errno": error.errno})); sys.exit()
body = b'{"jsonrpc":"2.0","id":1,"method":"bonsai/daemon/status"}'
got = b""
try:
    sock.sendall(b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body)
    while chunk := sock.recv(65536):
        got += chunk
except OSError as error:
    print(json.dumps({"connected": True, "reply": got.decode(), "errno": error.errno}))
    sys.exit()
print(json.dumps({"connected": True, "reply": got.decode(), "errno": None}))
"""


def as_nobody(socket_path: Path) -> dict[str, Any]:
    command = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    done = subprocess.run(
        [*command, "/usr/bin/python3", "-I", "-c", NOBODY_CLIENT, str(socket_path)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None or not Path("/usr/bin/python3").exists(),
    reason="needs root and setpriv to run a client as another uid",
)
def test_another_uid_is_refused(home: Path) -> None:
    run_dir = Path(tempfile.mkdtemp(prefix="bonsai-uid-", dir="/tmp"))
    try:
        os.chmod(run_dir, 0o755)
        path = run_dir / "run" / "daemon.sock"
        daemon = DaemonProcess(home, bonsai_env(home), cwd=home, socket_path=path)
        try:
            blocked = as_nobody(path)
            assert blocked == {"connected": False, "errno": 13}, "the 0700 directory stops it"
            os.chmod(path.parent, 0o755)
            os.chmod(path, 0o666)
            reached = as_nobody(path)
            assert reached["connected"] and reached["reply"] == "", reached
            with Raw(str(path)) as owner:
                assert owner.status()["version"], "the owner is still served"
            assert "refused a connection from uid 65534" in daemon.log_text()
        finally:
            assert daemon.stop() == 0
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def secret_file() -> bytes:
    lines = [f"{i:04d} " + "lorem ipsum dolor sit amet " * 3 for i in range(400)]
    lines[5] = f"0005 token: {TOOL_SECRET}"
    return ("\n".join(lines) + "\n").encode()


def everything_readable(rig: TurnRig, sid: str) -> str:
    """Every way a client or the model can read the session back, as one text."""
    request = rig.client.request
    texts = [json.dumps(request("bonsai/session/attach", {"sessionId": sid}))]
    for query in ("token", TOOL_SECRET[:16], TOOL_SECRET):
        recalled = request("bonsai/episodes/recall", {"sessionId": sid, "query": query})
        texts.append(json.dumps(recalled))
    for view in ("ledger", "wire", "turns"):
        texts.append(json.dumps(request("bonsai/ctx/get", {"sessionId": sid, "view": view})))
    for node in request("bonsai/ctx/get", {"sessionId": sid})["nodes"]:
        text = request("bonsai/ctx/text", {"sessionId": sid, "nodeId": node["id"]})
        texts.append(text["text"])
    return "\n".join(texts)


def test_redacted_secret_cannot_be_read_back(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"notes.txt": secret_file()})
    script = Script(
        steps=[
            Reply(tool_calls=[call("read_file", "read-1", path="notes.txt")]),
            Reply(tool_calls=[call("read_tool_output", "page-1", id="read-1", grep="token")]),
            Reply(text="Done."),
        ]
    )
    with turn_rig(tmp_path, script) as rig:
        sid = rig.session(ws)
        events = rig.turn(sid, "read notes.txt")
        first = stored_result(rig, sid, "read-1")
        readable = everything_readable(rig, sid)
        sent = rig.sent_to_model()
    assert kinds(events)[-1] == "done", events
    assert len(secret_file()) > 24_000 and "[REDACTED]" in first
    assert "the full output was not kept" in first, "a redacted output gets no handle"
    page = tool_result(events, "page-1")
    assert page["isError"] and "no stored output for tool call 'read-1'" in page["result"]
    assert "0005 token: [REDACTED]" in readable, "the redacted line is what reads back"
    assert TOOL_SECRET not in readable and TOOL_SECRET not in sent
    stored = b"".join(p.read_bytes() for p in rig.home.rglob("*") if p.is_file())
    assert TOOL_SECRET.encode() not in stored, "not in the database, its WAL or the log"


def test_api_key_never_reaches_the_log(tmp_path: Path) -> None:
    echo = Fault(kind="auth", message=f"Incorrect API key provided: {API_KEY}.")
    script = Script(faults={1: echo, 2: echo}, steps=[Reply(text="unreachable")])
    ws = workspace(tmp_path, {})
    with turn_rig(tmp_path, script, BONSAI_PROVIDER="openai", OPENAI_API_KEY=API_KEY) as rig:
        events = rig.turn(rig.session(ws), "hello")
        headers = rig.sim.requests[0].headers
        log = rig.daemon.log_text()
    [error] = [e for e in events if e["kind"] == "error"]
    assert (
        "401" in error["message"] and "Incorrect API key provided: [REDACTED]" in error["message"]
    )
    assert headers.get("authorization", "").startswith("<redacted"), "the key was sent"
    assert "401 Unauthorized" in log, "the failure is logged"
    for text in (log, json.dumps(events)):
        assert API_KEY not in text and API_KEY[3:30] not in text
    stored = b"".join(p.read_bytes() for p in rig.home.rglob("*") if p.is_file())
    assert API_KEY.encode() not in stored
