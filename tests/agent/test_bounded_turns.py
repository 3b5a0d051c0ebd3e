"""Bounded turns: every request carries an output limit that fits the window, and a
model step that runs past ``providers.step_budget_s`` is cancelled with a clear
event; the next turn works."""

from __future__ import annotations

import json
from pathlib import Path

from agent_helpers import make_rig

from bonsai.sim import Script
from bonsai.sim.script import Reply
from bonsai_testing import rpc


def config(home: Path, **providers: object) -> None:
    data = {
        "providers": {
            "models": {"small-sim": {"family": "openai", "context_window": 6_000}},
            **providers,
        },
        "context": {"summary_mode": "deterministic"},
    }
    (home / "config.json").write_text(json.dumps(data))


async def test_a_slow_step_is_cancelled_at_its_budget_and_the_next_turn_works(
    home: Path, workspace: Path
) -> None:
    config(home, step_budget_s=8)
    script = Script(steps=[Reply(text="word " * 400), Reply(text="quick answer")], latency_ms=100)
    async with make_rig(script, home, workspace, BONSAI_MODEL="small-sim") as rig:
        sid = await rig.session()
        _, events = await rig.turn(sid, "talk for a long time", timeout=60)
        last = events[-1]
        assert last["kind"] == "error" and "step_budget_s" in last["message"], last
        assert any(e["kind"] == "delta" for e in events), "it streamed before the budget ran out"
        log = await rpc(rig.client, "bonsai/session/attach", {"sessionId": sid})
        assert log["messages"][-1]["status"] == "interrupted"
        _, after = await rig.turn(sid, "and now briefly", timeout=60)
        assert after[-1]["kind"] == "done", after[-1]
        assert "".join(e.get("text", "") for e in after if e["kind"] == "delta") == "quick answer"


async def test_every_request_asks_for_an_output_limit_inside_a_small_window(
    home: Path, workspace: Path
) -> None:
    config(home)
    async with make_rig(
        Script(steps=[Reply(text="one"), Reply(text="two")]),
        home,
        workspace,
        BONSAI_MODEL="small-sim",
    ) as rig:
        sid = await rig.session()
        for text in ("first", "second"):
            _, events = await rig.turn(sid, text)
            assert events[-1]["kind"] == "done"
        limits = [r.body["max_tokens"] for r in rig.sim.requests]
        assert limits and all(0 < limit <= 6_000 // 4 for limit in limits), limits
        ledger = await rpc(rig.client, "bonsai/ctx/get", {"sessionId": sid, "view": "ledger"})
        totals = ledger["totals"]
        assert totals["window"] == 6_000 and totals["reserve"] == 1_500
        assert "your config" in totals["windowSource"]
