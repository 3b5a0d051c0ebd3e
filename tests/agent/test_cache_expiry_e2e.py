"""Rewrites at cache expiry, live: the daemon knows when the provider's cache of a
session was last refreshed (its last model reply) and, past the model's cache TTL,
takes the savings the payback rule deferred, as a ``expiry`` ledger event."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from agent_helpers import call, make_rig

from bonsai.agent.context_bridge import ContextBridge
from bonsai.core.context import AssemblyMemo
from bonsai.domain import Message, ToolCall
from bonsai.services.providers.pricing import pricing_of
from bonsai.services.providers.registry import lookup_model
from bonsai.services.store.db import open_database
from bonsai.services.store.sessions import SessionStore
from bonsai.services.tokens import estimator_for
from bonsai.settings import Settings
from bonsai.sim import Script
from bonsai.sim.script import Reply
from bonsai_testing import rpc

CONTEXT = {
    "output_reserve": 2_000,
    "summary_mode": "deterministic",
    "gc_trigger": 0.9,  # nothing is collected while the cache is warm
    "compact_trigger": 0.97,
    "compact_target": 0.2,
    "payback_horizon": 0.0,
}


def _bulky(n: int) -> list[Message]:
    tool = ToolCall(id=f"c{n}", name="bash", arguments=f'{{"command": "seq {n} {n + 400}"}}')
    output = "\n".join(str(k) for k in range(n, n + 400))
    return [
        Message(role="assistant", content=f"Step {n}.", tool_calls=(tool,)),
        Message(role="tool", content=output, tool_call_id=tool.id, name="bash"),
    ]


def _bridge(tmp_path: Path, now: list[float]) -> tuple[ContextBridge, SessionStore, str]:
    store = SessionStore(open_database(tmp_path / "bonsai.db"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sid = store.create(str(workspace), "expiry").session_id
    messages = [Message(role="user", content="count")]
    for n in range(6):
        messages += _bulky(n)
    store.append_many(sid, messages)
    settings = Settings.model_validate({"context": CONTEXT})
    info = lookup_model("claude-sonnet-4-5").info.model_copy(update={"context_window": 12_000})
    counter = estimator_for(info, cache_dir=tmp_path / "tok", tokenizer_path=None, model="x")
    bridge = ContextBridge(
        store=store,
        session_id=sid,
        workspace=workspace,
        settings=settings,
        model="claude-sonnet-4-5",
        model_info=info,
        counter=counter,
        tools=[],
        memo=AssemblyMemo(),
        pricing=pricing_of(info, name="claude-sonnet-4-5"),
        now=lambda: now[0],
    )
    return bridge, store, sid


def test_the_bridge_rewrites_for_free_only_after_the_cache_ttl(tmp_path: Path) -> None:
    clock = [0.0]
    bridge, store, sid = _bridge(tmp_path, clock)
    history = store.messages(sid)
    last_reply = max(s.created_at for s in history if s.message.role == "assistant")
    clock[0] = last_reply + 240  # four minutes: Anthropic's 5-minute cache still holds
    warm = bridge.assemble(history, 1)
    assert not [r for r in warm.records if r.kind == "expiry"] and warm.state.stubs == {}
    clock[0] = last_reply + 301
    cold = bridge.assemble(history, 1)
    expiry = [r for r in cold.records if r.kind == "expiry"]
    assert len(expiry) == 1 and "idle 301 s > TTL 300 s" in expiry[0].detail
    assert cold.state.stubs and cold.totals.used < warm.totals.used
    assert store.get_state(sid, "context")["stubs"], "the new state was persisted"


def _config(home: Path, ttl: float) -> None:
    model = {"family": "openai", "context_window": 12_000, "max_output": 1_000}
    config = {
        "providers": {
            "models": {"tiny-sim": {**model, "tokenizer": "o200k_base", "cache_ttl_s": ttl}}
        },
        "context": CONTEXT,
        "tools": {"policy": {"bash": "allow"}},
    }
    (home / "config.json").write_text(json.dumps(config))


def _steps() -> list[Reply]:
    first = [
        Reply(text=f"Step {i}.", tool_calls=[call("bash", command=f"seq {i} {i + 400}")])
        for i in range(6)
    ]
    return [*first, Reply(text="Counted."), Reply(text="Still counted.")]


async def _expiry_events(home: Path, workspace: Path, ttl: float) -> tuple[list[dict], int]:
    _config(home, ttl)
    async with make_rig(Script(steps=_steps()), home, workspace, BONSAI_MODEL="tiny-sim") as rig:
        sid = await rig.session()
        _, events = await rig.turn(sid, "count", timeout=120)
        assert events[-1]["kind"] == "done", events[-1]
        await asyncio.sleep(1.5)  # the user reads the answer: longer than a 1 s cache lives
        _, events = await rig.turn(sid, "again?", timeout=120)
        assert events[-1]["kind"] == "done", events[-1]
        turns = await rpc(rig.client, "bonsai/ctx/get", {"sessionId": sid, "view": "turns"})
        found = [e for t in turns["turns"] for e in t["events"] if e["kind"] == "expiry"]
        last = rig.sim.requests[-1].body["messages"]
        stubbed = sum("taken at cache expiry" in str(m.get("content")) for m in last)
        return found, stubbed


async def test_a_turn_after_the_cache_expired_takes_the_deferred_stubs(
    home: Path, workspace: Path
) -> None:
    found, stubbed = await _expiry_events(home, workspace, ttl=1.0)
    assert len(found) == 1, found
    assert found[0]["detail"].startswith("rewrite at cache expiry (idle ")
    assert found[0]["tokensAfter"] < found[0]["tokensBefore"]
    assert stubbed >= 1, "the provider received the stubs"


async def test_a_turn_within_the_cache_lifetime_rewrites_nothing(
    home: Path, workspace: Path
) -> None:
    found, stubbed = await _expiry_events(home, workspace, ttl=3_600.0)
    assert found == [] and stubbed == 0
