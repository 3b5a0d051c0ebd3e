"""``bonsai replay`` over many runs: every run of a multi-run file, ``--run K``,
folders with a progress bar, ``--json`` lines with the total, the table, and
recorded tool outputs cut at execution time as live ones are."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "importers"))
from recordings import aider, claude_code, mini_swe_v1

from bonsai.cli.replay import add_replay_commands


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="bonsai")
    add_replay_commands(parser.add_subparsers())
    args = parser.parse_args(list(argv))
    return int(args.func(args))


@pytest.fixture
def corpus(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BONSAI_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "corpus"
    (folder / "nested").mkdir(parents=True)
    (folder / "chat.aider.chat.history.md").write_text(aider(), encoding="utf-8")
    (folder / "a.traj.json").write_text(mini_swe_v1(), encoding="utf-8")
    (folder / "nested" / "session.jsonl").write_text(claude_code(), encoding="utf-8")
    (folder / "README.md").write_text("# not a recording\n", encoding="utf-8")
    (folder / "notes.txt").write_text("plain words\n", encoding="utf-8")
    return folder


def _lines(capsys: pytest.CaptureFixture[str]) -> tuple[list[dict], str]:  # type: ignore[type-arg]
    captured = capsys.readouterr()
    return [json.loads(line) for line in captured.out.splitlines()], captured.err


def test_a_multi_run_file_replays_every_run_by_default(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli("replay", str(corpus / "chat.aider.chat.history.md"), "--json") == 0
    lines, _ = _lines(capsys)
    runs = [line for line in lines if line["kind"] == "run"]
    assert [r["run"] for r in runs] == [0, 1, 2] and all(r["runs"] == 3 for r in runs)
    assert [r["title"] for r in runs] == ["add a greeting", "refactor main", "thanks"]
    total = lines[-1]
    assert total["kind"] == "total" and total["runs"] == 3
    assert total["turns"] == sum(r["report"]["turns"] for r in runs)
    assert total["rawInputTokens"] == sum(r["report"]["rawInputTokens"] for r in runs)


def test_run_k_replays_one_run(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(corpus / "chat.aider.chat.history.md")
    assert run_cli("replay", path, "--run", "1", "--json", "--no-store") == 0
    lines, _ = _lines(capsys)
    assert [(line["kind"], line.get("run")) for line in lines] == [("run", 1), ("total", None)]
    assert run_cli("replay", path, "--run", "7") == 1
    assert "run 7 does not exist: the file holds 3 runs" in capsys.readouterr().err


def test_a_folder_replays_with_a_progress_bar_a_table_and_a_total(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli("replay", str(corpus), "--jobs", "1") == 0
    captured = capsys.readouterr()
    table = captured.out.splitlines()
    assert table[0].split() == [
        "run", "calls", "raw", "managed", "cached", "saved", "fit", "rewrites", "cost"
    ]  # fmt: skip
    rows = [line for line in table[2:] if line and not line.startswith(("-", "priced:"))]
    names = [line.split()[0] for line in rows]
    assert names == [
        "a.traj.json",
        "chat.aider.chat.history.md#0",
        "chat.aider.chat.history.md#1",
        "chat.aider.chat.history.md#2",
        "session.jsonl#0",
        "session.jsonl#1",
        "total",
    ]
    assert rows[-1].startswith("total (6 runs)")
    assert table[-1].startswith("priced: raw $")
    err = captured.err
    assert "replay [" in err and "4/4 files, 6 runs" in err  # README.md is not a recording
    assert "skipped" in err and "notes.txt: unrecognised format" in err


def test_several_files_in_two_worker_processes_give_the_same_rows(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = [str(corpus / "a.traj.json"), str(corpus / "chat.aider.chat.history.md")]
    assert run_cli("replay", *files, "--json", "--jobs", "1", "--no-progress") == 0
    one, _ = _lines(capsys)
    assert run_cli("replay", *files, "--json", "--jobs", "2", "--no-progress") == 0
    two, err = _lines(capsys)
    strip = [{**line, "report": {**line["report"], "perTurn": None}} for line in one[:-1]]
    again = [{**line, "report": {**line["report"], "perTurn": None}} for line in two[:-1]]
    for a, b in zip(strip, again, strict=True):
        for key in ("pipelineMsP50", "pipelineMsP95"):
            a["report"].pop(key), b["report"].pop(key)
        assert a == b
    assert err == ""


def test_a_huge_recorded_output_is_cut_at_execution_time_as_a_live_one(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 22 (3): a recorded output over ``tool_output.max_chars`` is cut to head
    and tail with the read_tool_output marker, exactly as the live turn cuts it."""
    monkeypatch.setenv("BONSAI_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    huge = "\n".join(f"line {i}: " + "x" * 60 for i in range(2_000))  # ~136,000 characters
    recording = [
        {"role": "user", "content": "Look at the log."},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": "cat big.log"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": huge},
        {"role": "assistant", "content": "It is long."},
    ]
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(recording), encoding="utf-8")
    assert run_cli("replay", str(path), "--json", "--no-store", "--window", "32000") == 0
    lines, _ = _lines(capsys)
    turns = lines[0]["report"]["perTurn"]
    assert not turns[1]["rawFits"] and turns[1]["fits"]
    assert turns[1]["managedInputTokens"] < 10_000 < turns[1]["rawInputTokens"]
    # the same cut as the live turn makes (one shared function)
    from bonsai.core.turn.tool_finish import finish_output
    from bonsai.settings import ToolOutputSettings

    finished = finish_output(huge, ToolOutputSettings(), "call_1")
    assert finished.truncated and finished.spill == huge
    assert 'read_tool_output({"id": "call_1"' in finished.text
