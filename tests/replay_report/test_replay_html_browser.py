"""The corpus HTML report opened in headless Chromium: it renders, has its
charts (one per run and the corpus bars), and logs no console error.

Chromium (``/usr/bin/chromium``), node and playwright-core come from
``extensions/setup-editors.sh`` (as for tests/editors); the test skips with the
reason when they are not installed, and fails instead under
``BONSAI_REQUIRE_EDITORS=1`` (CI). A screenshot lands in
``test-artifacts/replay/``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "importers"))
from recordings import aider, claude_code  # noqa: E402

from bonsai.cli.replay import add_replay_commands  # noqa: E402

NODE = ROOT / ".tools" / "node24" / "bin" / "node"
CHROMIUM = Path("/usr/bin/chromium")
NODE_MODULES = Path(
    os.environ.get("BONSAI_NODE_MODULES", ROOT / "extensions" / "vscode" / "node_modules")
)
ARTIFACTS = ROOT / "test-artifacts" / "replay"


def _problem() -> str | None:
    missing = [str(p) for p in (NODE, CHROMIUM, NODE_MODULES / "playwright-core") if not p.exists()]
    if missing:
        return f"missing {', '.join(missing)}: run `sh extensions/setup-editors.sh` as root"
    return None


def _recording(turns: int) -> str:
    """An OpenAI-format session whose reads fill a small window (so rewrites happen)."""
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Find the bug in the modules."},
    ]
    for n in range(turns):
        call = {
            "id": f"call_{n}",
            "type": "function",
            "function": {"name": "read_file", "arguments": json.dumps({"path": f"m{n}.py"})},
        }
        messages.append({"role": "assistant", "content": f"Reading m{n}.", "tool_calls": [call]})
        body = "\n".join(f"def f{n}_{k}(x):\n    return x + {k}" for k in range(120))
        messages.append({"role": "tool", "tool_call_id": f"call_{n}", "content": body})
    messages.append({"role": "assistant", "content": "Found it."})
    return json.dumps(messages)


def test_the_corpus_report_renders_in_chromium_with_its_charts(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    problem = _problem()
    if problem is not None:
        if os.environ.get("BONSAI_REQUIRE_EDITORS") == "1":
            pytest.fail(f"Chromium toolchain unavailable: {problem}")
        pytest.skip(f"Chromium toolchain unavailable: {problem}")
    monkeypatch.setenv("BONSAI_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    (home / "config.json").write_text('{"context": {"output_reserve": 4000}}')
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "reads.json").write_text(_recording(10), encoding="utf-8")
    (corpus / "chat.md").write_text(aider(), encoding="utf-8")
    (corpus / "claude.jsonl").write_text(claude_code(), encoding="utf-8")
    out = tmp_path / "report.html"
    parser = argparse.ArgumentParser(prog="bonsai")
    add_replay_commands(parser.add_subparsers())
    args = parser.parse_args(
        ["replay", str(corpus), "--window", "12000", "--html", str(out), "--no-progress"]
    )
    assert args.func(args) == 0
    runs = 1 + 3 + 2
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "corpus-report.png"
    env = {**os.environ, "NODE_PATH": str(NODE_MODULES)}
    proc = subprocess.run(
        [str(NODE), str(Path(__file__).with_name("render_check.cjs")), str(CHROMIUM), str(out),
         str(shot)],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    assert info["errors"] == []
    assert info["charts"] == runs + 1 and info["drawn"] == runs + 1  # per run, and the bars
    assert info["raw"] == info["managed"] == info["cached"] == runs
    assert info["bars"] == runs and info["runRows"] == runs
    assert info["rewrites"] >= 1  # the reads overflow 12k: the pipeline rewrote history
    assert shot.stat().st_size > 10_000
