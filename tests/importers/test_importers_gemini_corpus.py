"""The mini-swe-agent corpus (150 real Gemini 3 Pro trajectories on SWE-bench
Verified) imports completely: a spread sample here, the whole corpus in
``bench/replay_corpus.py``.

Read in place from ``../shared/corpus/mini-swe-agent-gemini`` (or
``$BONSAI_CORPUS``); skipped with the reason when absent.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from importer_helpers import assert_paired

from bonsai.services.importers import import_file

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(
    os.environ.get("BONSAI_CORPUS", ROOT.parent / "shared" / "corpus" / "mini-swe-agent-gemini")
)
SAMPLE = 8


def _sample() -> list[object]:
    files = sorted(CORPUS.glob("*.traj.json")) if CORPUS.is_dir() else []
    if not files:
        reason = f"no mini-swe-agent corpus at {CORPUS} (set BONSAI_CORPUS)"
        return [pytest.param(None, marks=pytest.mark.skip(reason=reason))]
    step = max(1, len(files) // SAMPLE)
    return [pytest.param(p, id=p.name) for p in files[::step][:SAMPLE]]


@pytest.mark.parametrize("path", _sample())
def test_a_real_trajectory_imports_whole(path: Path) -> None:
    recorded = json.loads(path.read_text(encoding="utf-8"))
    session = import_file(path)
    assert session.format == "mini-swe-agent"
    assert session.warnings == []
    # every recorded message is there, byte for byte, in order
    assert [m.content for m in session.messages] == [m["content"] for m in recorded["messages"]]
    assert session.outcome == recorded["info"]["submission"]
    assert not session.title.startswith("<")
    calls = sum(len(m.tool_calls) for m in session.messages)
    results = sum(m.role == "tool" for m in session.messages)
    assert calls > 0 and calls - results in (0, 1)  # only the last call may go unanswered
    assert_paired(session.messages)
