"""Atomic writes: a crash leaves the old file or the new one, never a torn mix."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bonsai.services.fs.atomic import atomic_write

OLD = b"A" * 300_000
NEW = b"B" * 300_000

_WRITER = """
import sys
from pathlib import Path
from bonsai.services.fs.atomic import atomic_write
path = Path(sys.argv[1])
payloads = [b"A" * 300_000, b"B" * 300_000]
print("ready", flush=True)
i = 0
while True:
    atomic_write(path, payloads[i % 2])
    i += 1
"""


def test_failure_between_write_and_replace_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "entry.md"
    path.write_bytes(OLD)

    def crash(*args: object, **kwargs: object) -> None:
        raise OSError("simulated crash before rename")

    monkeypatch.setattr(os, "rename", crash)
    with pytest.raises(OSError, match="simulated crash"):
        atomic_write(path, NEW)
    assert path.read_bytes() == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entry.md"]


def test_sigkill_mid_write_never_leaves_a_torn_file(tmp_path: Path) -> None:
    path = tmp_path / "entry.md"
    path.write_bytes(OLD)
    for delay in (0.05, 0.11, 0.17):
        child = subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE, text=True
        )
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        time.sleep(delay)
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert path.read_bytes() in (OLD, NEW)


def test_new_file_in_a_missing_folder(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "x.md"
    atomic_write(path, b"hello")
    assert path.read_bytes() == b"hello"
