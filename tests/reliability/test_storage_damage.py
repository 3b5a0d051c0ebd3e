"""Damaged storage is detected: the daemon refuses to start over less than it acknowledged.

Each case of issue 18's first finding: 30 acknowledged appends, then the
database truncated or deleted (after a clean stop), or the WAL truncated,
flipped or deleted (after a SIGKILL). On the old main the daemon started and
said nothing; now it refuses in one line naming the file and `bonsai doctor`,
and changes nothing. ``bonsai doctor`` reports a healthy home, a damaged one,
and restores a backup (keeping the damaged files aside).
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from bonsai_testing import BONSAI, bonsai_env
from reliability.homes import (
    acknowledged_appends,
    client,
    kill,
    messages_in,
    one_line,
    serve,
    start_daemon,
    stop,
)

ACKED = 30


def _digest(home: Path) -> dict[str, str]:
    out = {}
    for name in ("bonsai.db", "bonsai.db-wal", "bonsai.commit"):
        path = home / name
        out[name] = hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "-"
    return out


def _truncate_db(home: Path) -> None:
    (home / "bonsai.db").write_bytes(b"")


def _delete_db(home: Path) -> None:
    (home / "bonsai.db").unlink()


def _truncate_wal(home: Path) -> None:
    wal = home / "bonsai.db-wal"
    data = wal.read_bytes()
    wal.write_bytes(data[: len(data) // 2])


def _flip_wal(home: Path) -> None:
    wal = home / "bonsai.db-wal"
    data = bytearray(wal.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(b ^ 0xFF for b in data[middle : middle + 64])
    wal.write_bytes(bytes(data))


def _delete_wal(home: Path) -> None:
    (home / "bonsai.db-wal").unlink()
    (home / "bonsai.db-shm").unlink(missing_ok=True)


CLEAN_STOP: dict[str, Callable[[Path], None]] = {
    "database truncated to 0 bytes": _truncate_db,
    "database deleted": _delete_db,
}
AFTER_SIGKILL: dict[str, Callable[[Path], None]] = {
    "WAL truncated": _truncate_wal,
    "WAL with 64 bytes flipped": _flip_wal,
    "WAL deleted": _delete_wal,
}


def _assert_refused(home: Path) -> str:
    before = _digest(home)
    done = serve(home, "--stdio")
    assert done.returncode == 2, done.stderr
    line = one_line(done.stderr)
    assert str(home / "bonsai.db") in line
    assert f"{ACKED} were acknowledged" in line
    assert "bonsai doctor" in line
    assert _digest(home) == before, "a refusal changes nothing"
    return line


@pytest.mark.parametrize("damage", list(CLEAN_STOP))
def test_a_damaged_database_after_a_clean_stop_is_refused(tmp_path: Path, damage: str) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    proc, _ = acknowledged_appends(home, ws, ACKED)
    stop(proc, home)
    CLEAN_STOP[damage](home)
    line = _assert_refused(home)
    assert "0 bytes" in line or "missing" in line


@pytest.mark.parametrize("damage", list(AFTER_SIGKILL))
def test_a_damaged_wal_after_sigkill_is_refused(tmp_path: Path, damage: str) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    proc, _ = acknowledged_appends(home, ws, ACKED)
    kill(proc)
    assert (home / "bonsai.db-wal").stat().st_size > 0, "the appends live in the WAL"
    AFTER_SIGKILL[damage](home)
    assert messages_in(home) < ACKED  # SQLite itself loses them: noticing it is ours
    _assert_refused(home)


def test_an_intact_wal_after_sigkill_starts_with_every_message(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    proc, sid = acknowledged_appends(home, ws, ACKED)
    kill(proc)
    proc = start_daemon(home)
    messages = client(home).request("bonsai/session/attach", {"sessionId": sid})
    stop(proc, home)
    assert len(messages["messages"]) == ACKED


def doctor(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*BONSAI, "doctor", *args],
        env=bonsai_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_doctor_on_a_healthy_home(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    proc, _ = acknowledged_appends(home, ws, 5)
    running = doctor(home)
    stop(proc, home)
    assert running.returncode == 0, running.stdout
    assert "holds" in running.stdout and "pid" in running.stdout
    done = doctor(home)
    assert done.returncode == 0, done.stdout
    assert "integrity check ok, 5 messages" in done.stdout
    assert "5 acknowledged, 5 present" in done.stdout
    assert "-5m.db" in done.stdout, "a backup was taken at the clean stop"
    assert done.stdout.strip().endswith("all good")


def test_doctor_finds_the_damage_and_restores_the_backup(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    proc, sid = acknowledged_appends(home, ws, 10)
    stop(proc, home)  # the clean stop backs up 10 messages
    proc = start_daemon(home)
    c = client(home)
    for i in range(20):
        c.request("bonsai/session/append", {"sessionId": sid, "role": "user", "content": f"m{i}"})
    kill(proc)
    _delete_wal(home)

    damaged = doctor(home)
    assert damaged.returncode == 1
    assert "FAIL" in damaged.stdout and "30 messages were acknowledged" in damaged.stdout
    assert "--restore" in damaged.stdout

    unconfirmed = doctor(home, "--restore")  # no terminal, no --yes: nothing happens
    assert unconfirmed.returncode == 1 and "--yes" in unconfirmed.stderr
    assert not list(home.glob("damaged-*"))

    restored = doctor(home, "--restore", "--yes")
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert "restored 10 messages" in restored.stdout
    aside = list(home.glob("damaged-*"))
    assert len(aside) == 1 and (aside[0] / "bonsai.db").exists(), "the damaged files are kept"
    assert (aside[0] / "bonsai.commit").exists()

    after = doctor(home)
    assert after.returncode == 0, after.stdout
    proc = start_daemon(home)
    messages = client(home).request("bonsai/session/attach", {"sessionId": sid})
    stop(proc, home)
    assert len(messages["messages"]) == 10


def test_doctor_accept_loss_carries_on_with_what_is_left(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    proc, sid = acknowledged_appends(home, ws, ACKED)
    kill(proc)
    _truncate_wal(home)
    left = messages_in(home)
    accepted = doctor(home, "--accept-loss", "--yes")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert (next(home.glob("damaged-*")) / "bonsai.db-wal").exists(), "a copy is kept aside"
    proc = start_daemon(home)
    messages = client(home).request("bonsai/session/attach", {"sessionId": sid})
    stop(proc, home)
    assert len(messages["messages"]) == left
