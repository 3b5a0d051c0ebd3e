"""Reinjection (opt-in) returns what recall returns: hits served by size, with their question."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bonsai.sim import Script
from bonsai.sim.script import Reply
from episodes.rig import make_rig

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
from tiny_model2vec import build_tiny_model

QUESTION = "why does the build fail sometimes?"
SENTENCE = "the sqlite database was locked by two writers."
LONG_ANSWER = "Found it.\n" + " ".join([SENTENCE] * 150)  # ~1,400 tokens: an excerpt


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.mark.parametrize("mandatory", [True, False])
async def test_related_history_is_an_excerpt_with_its_question(
    home: Path, workspace: Path, mandatory: bool
) -> None:
    build_tiny_model(home / "cache" / "memory-model")
    config = {
        "context": {"retrieval_reinjection": True, "retrieval_min_score": 0.3},
        "retrieval": {"mandatory_context": mandatory},
    }
    (home / "config.json").write_text(json.dumps(config))
    script = Script(steps=[Reply(text=LONG_ANSWER), Reply(text="As before.")])
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, QUESTION)
        await rig.turn(sid, "what caused the busy timeout?")
        related = [
            str(m["content"])
            for m in rig.sent(1)
            if m["role"] == "user" and "<related_context>" in str(m["content"])
        ]
    assert len(related) == 1
    block = related[0]
    assert "[excerpt, not the original:" in block and 'recall({"message": "' in block
    assert SENTENCE in block and LONG_ANSWER not in block, "verbatim, not whole"
    assert (f"]\n{QUESTION}\n[answer:]" in block) is mandatory
