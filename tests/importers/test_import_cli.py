"""``bonsai import FILE…`` through the daemon: every run a real session, listed
for the editors, with its tree, episodes and ledger; a bad file is reported and
the others still imported."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
import recordings

from bonsai.cli.client import DaemonClient
from bonsai.cli.replay import add_replay_commands
from bonsai.daemon import lifecycle


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="bonsai")
    add_replay_commands(parser.add_subparsers())
    args = parser.parse_args(list(argv))
    return int(args.func(args))


@pytest.fixture
def files(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.setenv("BONSAI_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    out = {
        "aider": tmp_path / "chat.md",
        "claude": tmp_path / "claude.jsonl",
        "mini": tmp_path / "run.traj.json",
        "codex": tmp_path / "rollout.jsonl",
    }
    out["aider"].write_text(recordings.aider(), encoding="utf-8")
    out["claude"].write_text(recordings.claude_code(), encoding="utf-8")
    out["mini"].write_text(recordings.mini_swe_v1(), encoding="utf-8")
    out["codex"].write_text(recordings.codex(), encoding="utf-8")
    return out


def _lines(capsys: pytest.CaptureFixture[str]) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_every_run_of_every_file_becomes_a_session_the_daemon_lists(
    files: dict[str, Path], home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = [str(files[k]) for k in ("aider", "claude", "mini", "codex")]
    assert run_cli("import", *paths, "--json") == 0
    imported = _lines(capsys)
    assert [(Path(i["source"]).name, i["run"]) for i in imported] == [
        ("chat.md", 0),
        ("chat.md", 1),
        ("chat.md", 2),
        ("claude.jsonl", 0),
        ("claude.jsonl", 1),
        ("run.traj.json", 0),
        ("rollout.jsonl", 0),
    ]
    assert {i["via"] for i in imported} == {"daemon"}
    assert lifecycle.running_socket(home) is not None  # the daemon owns what was imported
    client = DaemonClient.connect(home, start=False)
    try:
        listed = client.request("bonsai/session/list", {"workspace": str(tmp_path)})["sessions"]
        titles = {s["sessionId"]: s["title"] for s in listed}
        for info in imported:
            assert titles[info["sessionId"]] == info["title"]
        mini = next(i for i in imported if i["format"] == "mini-swe-agent")
        assert mini["title"] == "Separability matrix is wrong for nested models"
        sid = mini["sessionId"]
        tree = client.request("bonsai/tree/get", {"sessionId": sid})
        assert len(tree["activePath"]) == mini["messages"]
        ledger = client.request("bonsai/ctx/get", {"sessionId": sid, "view": "ledger"})
        assert ledger["nodes"] and ledger["totals"]["used"] > 0
        episodes = client.request("bonsai/episodes/list", {"sessionId": sid})
        assert isinstance(episodes["episodes"], list)
    finally:
        client.close()


def test_one_run_only_and_a_bad_file_does_not_stop_the_others(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("just words\n", encoding="utf-8")
    code = run_cli("import", str(bad), str(files["aider"]), "--run", "1")
    captured = capsys.readouterr()
    assert code == 1
    assert "notes.txt: unrecognised format; the supported formats are" in captured.err
    lines = captured.out.splitlines()
    assert len(lines) == 2 and lines[0].startswith("imported 4 messages (aider, run 2 of 3)")
    assert lines[0].endswith(": refactor main")
    assert "closed at the next user turn" in lines[1]


def test_a_recording_cut_mid_write_imports_its_whole_lines_and_says_which_line_was_cut(
    files: dict[str, Path], home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The writer was killed mid-line: the terminal and the JSON-RPC answer both name
    the file and the line left out, and the session holds every whole line."""
    whole = files["claude"].read_text(encoding="utf-8")
    cut = tmp_path / "killed.jsonl"
    cut.write_text(whole + '{"type":"assistant","message":{"content":[{"type":"te', "utf-8")
    line = whole.count("\n") + 1
    note = f"line {line} of {cut} is cut off (the recording ended mid-write); it was skipped"
    assert run_cli("import", str(files["claude"]), str(cut), "--run", "0") == 0
    shown_lines = capsys.readouterr().out.splitlines()
    assert f"  note: {note}" in shown_lines, shown_lines
    assert sum("note: " in text and "cut off" in text for text in shown_lines) == 1
    full_messages = int(shown_lines[0].split()[1])
    client = DaemonClient.connect(home, start=False)
    try:
        params = {"path": str(cut), "format": "auto", "run": 0, "workspace": str(tmp_path)}
        answer = client.request("bonsai/session/import", params)
        assert answer["warnings"][0] == note
        assert answer["messages"] == full_messages, "nothing lost but the cut line"
        tree = client.request("bonsai/tree/get", {"sessionId": answer["sessionId"]})
        assert len(tree["activePath"]) == full_messages
    finally:
        client.close()
