"""``bonsai import``, ``bonsai replay`` and ``bonsai recall`` against a real BONSAI_HOME."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from replay_helpers import write_recording

from bonsai.cli.replay import add_replay_commands
from bonsai.daemon import lifecycle
from bonsai.services.replay import open_readonly
from bonsai.services.store.sessions import SessionStore


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="bonsai")
    add_replay_commands(parser.add_subparsers())
    args = parser.parse_args(list(argv))
    return int(args.func(args))


@pytest.fixture
def env(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BONSAI_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    (home / "config.json").write_text('{"context": {"output_reserve": 4000}}')
    return write_recording(tmp_path)


def _json(capsys: pytest.CaptureFixture[str]) -> dict:  # type: ignore[type-arg]
    return json.loads(capsys.readouterr().out)


def _report(capsys: pytest.CaptureFixture[str]) -> dict:  # type: ignore[type-arg]
    """The report of a one-run ``replay --json`` (its run line; the total line follows)."""
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["kind"] for line in lines] == ["run", "total"]
    return dict(lines[0]["report"])


def test_import_stores_the_session_byte_for_byte(
    env: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli("import", str(env), "--json") == 0
    info = _json(capsys)
    assert (info["format"], info["messages"], info["via"]) == ("openai", 25, "daemon")
    conn = open_readonly(home)
    stored = SessionStore(conn).messages(info["sessionId"])
    conn.close()
    recorded = json.loads(env.read_text())
    assert [s.message.content for s in stored] == [m["content"] for m in recorded]
    assert stored[3].message.evidence is not None and stored[3].message.evidence.kind == "read"


def test_replay_prints_a_report_stores_the_session_and_writes_html(
    env: Path, home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    html = tmp_path / "out.html"
    assert run_cli("replay", str(env), "--window", "8000", "--json", "--html", str(html)) == 0
    report = _report(capsys)
    assert report["turns"] == 12 and report["fitFraction"] == 1.0
    assert report["managedInputTokens"] < report["rawInputTokens"]
    assert (report["window"], report["usableWindow"]) == (8_000, 4_000)
    page = html.read_text()
    assert (
        page.startswith("<!DOCTYPE html>")
        and "<script" not in page
        and "http" not in page.split("</head>")[1]
    )
    again = run_cli("replay", "--session", report["sessionId"], "--window", "8000", "--json")
    assert again == 0
    stored = _report(capsys)
    # the same recording: the same raw side and the same decisions (stub texts name
    # the stored message ids, so managed sizes differ by a few tokens)
    assert [t["rawInputTokens"] for t in stored["perTurn"]] == [
        t["rawInputTokens"] for t in report["perTurn"]
    ]
    assert stored["events"] == report["events"]


def test_no_manage_reproduces_raw(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        run_cli("replay", str(env), "--no-store", "--no-manage", "--window", "20000", "--json") == 0
    )
    report = _report(capsys)
    assert (
        report["sessionId"] == "" and report["savedFraction"] == 0.0 and report["costRatio"] == 1.0
    )
    assert all(t["rawInputTokens"] == t["managedInputTokens"] for t in report["perTurn"])


def test_recall_finds_the_original_text(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_cli("import", str(env), "--json")
    session = _json(capsys)["sessionId"]
    assert run_cli("recall", "--session", session, "f3_7 wrong value", "--json") == 0
    results = _json(capsys)["results"]
    assert results[0]["role"] == "user" and results[0]["episode"] is None
    assert results[0]["text"].startswith("Find why f3_7 returns the wrong value")
    assert "[f3_7]" in results[0]["snippet"]
    assert set(results[0]) == {"messageId", "role", "episode", "score", "snippet", "text"}
    assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)


def test_the_text_report_names_the_summary_mode(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        run_cli("replay", str(env), "--no-store", "--window", "8000", "--preset", "save", "--turns")
        == 0
    )
    out = capsys.readouterr().out
    assert "preset save" in out and "summaries: deterministic fallback (offline)" in out
    assert "calls that fit" in out and "   11 raw" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("replay", "x.json", "--window", "4000"), "is not larger than the output reserve (4,000)"),
        (("recall", "--session", "s_missing", "x"), "no bonsai database"),
        (("replay",), "give a recording FILE, a folder of recordings, or --session ID"),
        (("replay", "missing.json"), "cannot read the file"),
    ],
)
def test_errors_are_one_clear_line(
    env: Path, argv: tuple[str, ...], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(*argv) == 1
    assert message in capsys.readouterr().err


def test_reads_work_next_to_a_running_daemon(
    env: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_cli("import", str(env), "--json")
    session = _json(capsys)["sessionId"]
    lifecycle.spawn_daemon(home).close()  # the daemon now owns the database
    assert run_cli("recall", "--session", session, "passed", "--json") == 0
    assert _json(capsys)["results"]
    assert run_cli("replay", "--session", session, "--window", "8000", "--json") == 0
    assert _report(capsys)["sessionId"] == session
    code = run_cli("import", str(env), "--json")
    assert code == 0 and _json(capsys)["via"] == "daemon"
