"""Escape sequences in what the CLI says about a hostile repository or recording.

The CLI's main output was already made safe (``test_terminal_escapes.py``), but
its warnings and reports quote text it did not write: a key of the repository's
``.bonsai/config.json`` (a JSON key may hold ``\\u001b``), the name of a
recording file, a recording's first message (its title). Printed raw, an
``ESC ]0;`` retitles the terminal and an ``ESC [2K`` erases the warning itself,
so a refused ``tools.policy`` goes unseen. Each is printed with its escapes
visible (``cli/terminal_text.py``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from bonsai_testing import BONSAI, bonsai_env

TITLE = "\x1b]0;pwned-title\x07"
ERASE = "\r\x1b[2K"
FIXTURE = Path(__file__).parents[1] / "fixtures" / "importers" / "openai_chat.jsonl"


def _unsafe(out: str) -> list[str]:
    return [seq for seq in ("\x1b", "\x07", "\r", "\x9b", "\u202e") if seq in out]


def _bonsai(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*BONSAI, *args],
        env=bonsai_env(home),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def hostile_config(root: Path) -> Path:
    ws = root / "ws"
    (ws / ".bonsai").mkdir(parents=True)
    config = {
        "context": {f"{TITLE}x": 1},  # not a setting: named in a problem line
        "tools": {"policy": {f"bash{ERASE}": "allow"}},  # refused: named in a problem line
    }
    (ws / ".bonsai" / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return ws


def test_settings_problems_name_hostile_keys_as_text(home: Path, tmp_path: Path) -> None:
    ws = hostile_config(tmp_path)
    listed = _bonsai(home, "memory", "list", "--workspace", str(ws))
    assert listed.returncode == 0, listed.stderr
    assert "a repository cannot approve tools for you" in listed.stderr, listed.stderr
    assert not _unsafe(listed.stderr), repr(listed.stderr)
    assert "\\x1b]0;pwned-title\\x07" in listed.stderr and "bash\\x0d\\x1b[2" in listed.stderr

    status = _bonsai(home, "status", cwd=ws)  # the daemon's view of the same file
    assert status.returncode == 0, status.stderr
    assert "a repository cannot approve tools for you" in status.stderr, status.stderr
    assert not _unsafe(status.stderr), repr(status.stderr)
    assert "\\x1b]0;pwned-title\\x07" in status.stderr


def test_replay_names_hostile_files_and_titles_as_text(home: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / f"bad{TITLE}.jsonl").write_text("not a recording\n", encoding="utf-8")
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["content"] = f"Find uses of TODO{TITLE}{ERASE}"
    (corpus / "good.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    one = _bonsai(home, "replay", str(corpus / "good.jsonl"))
    assert one.returncode == 0, one.stderr
    assert "Find uses of TODO" in one.stdout, one.stdout
    assert not _unsafe(one.stdout), repr(one.stdout)
    assert "\\x1b]0;pwned-title\\x07" in one.stdout

    both = _bonsai(home, "replay", str(corpus))
    assert "skipped" in both.stderr, both.stderr
    assert not _unsafe(both.stdout + both.stderr.replace("\r", "")), repr(both.stderr)
    assert "bad\\x1b]0;pwned-title\\x07.jsonl" in both.stderr

    alone = _bonsai(home, "replay", str(corpus / f"bad{TITLE}.jsonl"))
    assert alone.returncode == 1 and "unrecognised format" in alone.stderr, alone.stderr
    assert not _unsafe(alone.stderr), repr(alone.stderr)


def test_repomap_notes_name_hostile_files_as_text(home: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("def main():\n    return 1\n")
    os.mkfifo(ws / f"pipe{TITLE}.py")
    shutil.copy(FIXTURE, ws / "data.jsonl")
    mapped = _bonsai(home, "repomap", str(ws))
    assert mapped.returncode == 0, mapped.stderr
    assert not _unsafe(mapped.stdout + mapped.stderr), repr(mapped.stderr)
