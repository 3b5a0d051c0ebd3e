"""Running the real ``bonsai`` console script against a private home and the simulator."""

from __future__ import annotations

import subprocess
from pathlib import Path

from bonsai_testing import BONSAI, bonsai_env

TIMEOUT_S = 120


def run(
    home: Path, *args: str, cwd: Path | None = None, stdin: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """``bonsai ARGS`` with ``BONSAI_HOME=home`` and only the ``BONSAI_*`` given here."""
    clean = bonsai_env(home, **env)
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DEEPSEEK_API_KEY"):
        if name not in env:
            clean.pop(name, None)
    return subprocess.run(
        [*BONSAI, *args],
        env=clean,
        cwd=cwd,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def files_holding(root: Path, needle: bytes) -> list[Path]:
    """Every file under ``root`` whose bytes contain ``needle``."""
    found = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            try:
                if needle in path.read_bytes():
                    found.append(path)
            except OSError:
                continue
    return found
