"""Semantic reinjection (opt-in): related earlier history comes back for a new question."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agent_helpers import make_rig

from bonsai.sim import Script
from bonsai.sim.script import Reply

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
from tiny_model2vec import build_tiny_model


async def test_a_paraphrased_question_brings_back_the_earlier_answer(
    home: Path, workspace: Path
) -> None:
    build_tiny_model(home / "cache" / "memory-model")
    (home / "config.json").write_text(
        json.dumps({"context": {"retrieval_reinjection": True, "retrieval_min_score": 0.3}})
    )
    script = Script(
        steps=[
            Reply(text="Found it: the sqlite database was locked by two writers."),
            Reply(text="As before."),
            Reply(text="ok"),
        ]
    )
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, "why does the build fail sometimes?")
        await rig.turn(sid, "what caused the busy timeout?")
        second = [m for m in rig.sim.requests[1].body["messages"] if m["role"] == "user"]
        related = [m["content"] for m in second if "<related_context>" in str(m["content"])]
        assert len(related) == 1, "one block, on this turn"
        assert "sqlite database was locked by two writers" in related[0]
        assert "<untrusted-data" in related[0]
        first = [
            m
            for m in rig.sim.requests[0].body["messages"]
            if "<related_context>" in str(m["content"])
        ]
        assert first == [], "nothing related on the first turn"


async def test_without_a_model_reinjection_is_silently_skipped(home: Path, workspace: Path) -> None:
    (home / "config.json").write_text(json.dumps({"context": {"retrieval_reinjection": True}}))
    script = Script(steps=[Reply(text="one"), Reply(text="two")])
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, "the sqlite database was locked")
        _, events = await rig.turn(sid, "what caused the busy timeout?")
        assert events[-1]["kind"] == "done"
        assert "<related_context>" not in json.dumps(rig.sim.requests[1].body)
