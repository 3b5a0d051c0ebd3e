"""The cascade end to end: a session long enough to cross every threshold.

A custom model with a 12,000-token window (set in the user's config, like any
user could), a scripted agent that runs many commands with bulky output, and the
real daemon: every request must fit the usable window, and the ledger's turns
view must show the stubs and compactions that made it fit.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from agent_helpers import bulky_steps, call, make_rig

from bonsai.sim import Script
from bonsai.sim.prompt import openai_prompt
from bonsai.sim.script import Reply, Rule
from bonsai_testing import BONSAI, bonsai_env, events_of, rpc

WINDOW, RESERVE = 12_000, 2_000


def tiny_window_config(home: Path, memory: dict | None = None, **context: object) -> None:
    """A user config with a 12k-token custom model, like any user could write."""
    config: dict = {
        "providers": {
            "models": {
                "tiny-sim": {
                    "family": "openai",
                    "context_window": WINDOW,
                    "max_output": 1_000,
                    "tokenizer": "o200k_base",
                }
            }
        },
        "context": {"output_reserve": RESERVE, "summary_mode": "deterministic", **context},
        "tools": {"policy": {"bash": "allow"}},
    }
    if memory is not None:
        config["memory"] = memory
    (home / "config.json").write_text(json.dumps(config))


def request_tokens(body: dict) -> int:
    """What the (simulated) provider bills as prompt tokens for this request."""
    return len(openai_prompt(body))


async def test_a_long_session_always_fits_and_says_what_it_did(home: Path, workspace: Path) -> None:
    tiny_window_config(home)
    steps = bulky_steps(24, 700)
    async with make_rig(Script(steps=steps), home, workspace, BONSAI_MODEL="tiny-sim") as rig:
        sid = await rig.session()
        _, events = await rig.turn(sid, "run the numbers", timeout=120)
        assert events[-1]["kind"] == "done", events[-1]
        sizes = [request_tokens(r.body) for r in rig.sim.requests if r.route == "openai"]
        assert len(sizes) == 25
        assert max(sizes) <= WINDOW - RESERVE, f"every request fits the usable window: {sizes}"
        raw = sum(len(str(m.get("content"))) for m in rig.sim.requests[-1].body["messages"])
        assert raw < 24 * 2_800, "older outputs were stubbed or folded, not resent"

        turns = await rpc(rig.client, "bonsai/ctx/get", {"sessionId": sid, "view": "turns"})
        kinds = {e["kind"] for t in turns["turns"] for e in t["events"]}
        assert kinds & {"gc", "stub", "compaction", "summary", "fold"}, kinds
        ledger = await rpc(rig.client, "bonsai/ctx/get", {"sessionId": sid, "view": "ledger"})
        states = {n["state"] for n in ledger["nodes"]}
        assert states & {"stubbed", "summarized"}, states
        assert ledger["totals"]["used"] <= ledger["totals"]["usable"]


async def test_folding_offers_durable_facts_to_remember(home: Path, workspace: Path) -> None:
    tiny_window_config(home, memory={"promotion": "suggest"}, keep_recent_groups=2)
    facts = json.dumps(
        [
            {
                "name": "release-branch",
                "fact": "Releases are cut from the release/ branch.",
                "tier": "project",
            }
        ]
    )
    rule = Rule(match="durable", reply=Reply(text=facts))
    steps = bulky_steps(20, 900)
    async with make_rig(
        Script(steps=steps, rules=[rule]), home, workspace, BONSAI_MODEL="tiny-sim"
    ) as rig:
        sid = await rig.session()
        _, events = await rig.turn(sid, "run the numbers", timeout=120)
        assert events[-1]["kind"] == "done"
        suggestion = await events_of(rig.client).wait_for("bonsai/memory/suggestion", timeout=30)
        assert suggestion["sessionId"] == sid
        assert suggestion["facts"] == ["Releases are cut from the release/ branch."]
        assert not (workspace / ".bonsai" / "memory").exists(), "suggest writes nothing by itself"


async def test_handoff_nudge_and_telemetry_export(
    home: Path, workspace: Path, tmp_path: Path
) -> None:
    tiny_window_config(home, handoff_nudge=True, handoff_fraction=0.5)
    steps = bulky_steps(12, 700)
    async with make_rig(Script(steps=steps), home, workspace, BONSAI_MODEL="tiny-sim") as rig:
        sid = await rig.session()
        await rig.turn(sid, "crunch the numbers", timeout=120)
        nudges = events_of(rig.client).of("bonsai/handoff/suggested")
        assert len(nudges) == 1, "suggested once while over the fraction"
        assert nudges[0]["percent"] >= 50 and "## Goal\ncrunch the numbers" in nudges[0]["handoff"]

    # the CLI exports the same telemetry as JSON lines (a socket daemon starts for it)
    out = tmp_path / "events.jsonl"
    env = bonsai_env(home, BONSAI_MODEL="tiny-sim")
    try:
        done = subprocess.run(
            [*BONSAI, "ctx", "--session", sid, "--events-jsonl", str(out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        subprocess.run([*BONSAI, "stop"], env=env, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and all(r["sessionId"] == sid and "kind" in r for r in rows)
    assert any(r.get("prefixHashBefore") for r in rows), "prefix hashes recorded per rewrite"


async def test_background_summary_is_made_early_and_used_by_the_fold(
    home: Path, workspace: Path
) -> None:
    # the summary starts at half the window, well before compaction at 95%
    tiny_window_config(
        home,
        summary_mode="provider",
        background_summary=True,
        soft_fraction=0.5,
        gc_trigger=0.75,
        compact_trigger=0.95,
    )
    marker = "## Current goal\n- crunch `seq` output (BACKGROUND-SUMMARY-7f3)"
    rule = Rule(match="rolling summary of a coding-agent session", reply=Reply(text=marker))
    steps = bulky_steps(18, 700)
    async with make_rig(
        Script(steps=steps, rules=[rule]), home, workspace, BONSAI_MODEL="tiny-sim"
    ) as rig:
        sid = await rig.session()
        _, events = await rig.turn(sid, "run the numbers", timeout=120)
        assert events[-1]["kind"] == "done"
        summary_calls = [
            r
            for r in rig.sim.requests
            if "rolling summary" in json.dumps(r.body.get("messages", []))[:400]
        ]
        assert summary_calls, "a background summary was requested"
        later = [r for r in rig.sim.requests if "BACKGROUND-SUMMARY-7f3" in json.dumps(r.body)]
        assert later, "the fold used the background summary"
        turns = await rpc(rig.client, "bonsai/ctx/get", {"sessionId": sid, "view": "turns"})
        details = " ".join(e.get("detail", "") for t in turns["turns"] for e in t["events"])
        assert "background summary" in details


async def test_a_narrower_reread_of_unchanged_lines_reaches_the_provider_as_a_pointer(
    home: Path, workspace: Path
) -> None:
    (workspace / "big.py").write_text("".join(f"value_{n} = {n}\n" for n in range(1, 301)))
    steps = [
        Reply(text="Whole file.", tool_calls=[call("read_file", path="big.py")]),
        Reply(
            text="Lines 50-249.",
            tool_calls=[call("read_file", path="big.py", offset=50, limit=200)],
        ),
        Reply(text="Again.", tool_calls=[call("read_file", path="big.py", offset=50, limit=200)]),
        Reply(text="Done."),
    ]
    async with make_rig(Script(steps=steps), home, workspace) as rig:
        sid = await rig.session()
        _, events = await rig.turn(sid, "look at big.py", timeout=60)
        assert events[-1]["kind"] == "done", events[-1]
        last = [r for r in rig.sim.requests if r.route == "openai"][-1].body["messages"]
        tools = [m["content"] for m in last if m["role"] == "tool"]
        assert len(tools) == 3
        assert "   120\tvalue_120 = 120" in tools[0]
        assert tools[1].startswith("[reused previous read: ")
        assert "`big.py` lines 50-249 is unchanged" in tools[1]
        assert "value_120" not in tools[1]
        assert "   120\tvalue_120 = 120" in tools[2], "asked again: the real bytes"
