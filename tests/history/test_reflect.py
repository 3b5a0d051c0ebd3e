"""The reflect pass end to end: a rolling summary past ``reflect_above_tokens`` is
condensed (fast model in provider mode) before the next request is sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.agent_helpers import bulky_steps, make_rig
from bonsai.sim import Script
from bonsai.sim.script import Reply, Rule
from bonsai_testing import rpc

WINDOW, RESERVE = 12_000, 2_000


def tiny_window_config(home: Path, **context: object) -> None:
    """A user config with a 12k-token custom model, like any user could write."""
    model = {"family": "openai", "context_window": WINDOW, "max_output": 1_000}
    config = {
        "providers": {"models": {"tiny-sim": {**model, "tokenizer": "o200k_base"}}},
        "context": {"output_reserve": RESERVE, **context},
        "tools": {"policy": {"bash": "allow"}},
    }
    (home / "config.json").write_text(json.dumps(config))


CONDENSED = "## Current goal\n- run the numbers\n\n## Files touched\n- `numbers.txt` (read)"


def bulky_summary() -> str:
    """What a verbose fast model answers: about 1,500 tokens of findings."""
    findings = "\n".join(f"- `seq {i} {i + 900}` printed {i}..{i + 900}" for i in range(150))
    return f"## Current goal\n- run the numbers\n\n## Tool findings\n{findings}"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def script() -> Script:
    steps = bulky_steps(14, 900)
    rules = [
        Rule(match="You maintain the rolling summary", reply=Reply(text=bulky_summary())),
        Rule(match="(a reflect pass)", reply=Reply(text=CONDENSED)),
    ]
    return Script(steps=steps, rules=rules)


def sent_summaries(sim) -> list[str]:  # type: ignore[no-untyped-def]
    out = []
    for request in sim.requests:
        for message in request.body.get("messages", []):
            content = str(message.get("content"))
            if content.startswith("[bonsai summary"):
                out.append(content)
    return out


async def run(home: Path, workspace: Path, **context: object) -> tuple[list[str], set[str], list]:
    tiny_window_config(home, summary_mode="provider", keep_recent_groups=2, **context)
    async with make_rig(script(), home, workspace, BONSAI_MODEL="tiny-sim") as rig:
        sid = await rig.session()
        _, events = await rig.turn(sid, "run the numbers", timeout=120)
        assert events[-1]["kind"] == "done", events[-1]
        turns = await rpc(rig.client, "bonsai/ctx/get", {"sessionId": sid, "view": "turns"})
        kinds = {e["kind"] for t in turns["turns"] for e in t["events"]}
        reflects = [e for t in turns["turns"] for e in t["events"] if e["kind"] == "reflect"]
        return sent_summaries(rig.sim), kinds, reflects


async def test_a_summary_past_the_ceiling_is_condensed_by_the_fast_model(
    home: Path, workspace: Path
) -> None:
    summaries, kinds, reflects = await run(home, workspace, reflect_above_tokens=600)
    assert "fold" in kinds, "the session was long enough to fold"
    assert summaries, "a summary was sent"
    assert all("printed" not in s for s in summaries), "the bulky summary never reached the model"
    assert CONDENSED in summaries[-1]
    assert reflects and "fast model" in reflects[0]["detail"]


async def test_below_the_default_ceiling_the_summary_is_sent_as_written(
    home: Path, workspace: Path
) -> None:
    summaries, kinds, reflects = await run(home, workspace)
    assert "fold" in kinds and summaries
    assert "`seq 149 1049` printed 149..1049" in summaries[-1], "4,000 tokens: no reflect"
    assert not reflects
