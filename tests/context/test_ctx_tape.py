"""The session's tape (``core/context/tape.py``) never changes a result: on random
sessions that grow, get pinned, dropped, stubbed, restored, folded, archived,
edited in place and switched to another branch, an assembly that carries the
tape from call to call equals, message for message and ledger row for ledger
row, an assembly made without any memo."""

from __future__ import annotations

import json
import random
from typing import Any

from ctx_helpers import PERSONA, TOOLS, VOLATILE, char_counter, make_input
from hypothesis import given, settings
from hypothesis import strategies as st

from bonsai.core.context import AssemblyMemo, ContextState, Item, assemble
from bonsai.core.context.actions import apply_action
from bonsai.core.context.context_state import StubEntry
from bonsai.core.context.reuse import REUSE_PREFIX
from bonsai.core.context.work import Work, analyse
from bonsai.domain import Evidence, Message, ToolCall
from bonsai.settings import ContextSettings, EpisodeSettings

PATHS = ("a.py", "b.py", "c.py", "d.py")
PARTS = (
    [PERSONA, VOLATILE],
    [PERSONA.model_copy(update={"text": "You are bonsai, now with rules."}), VOLATILE],
    [PERSONA],
)
TOOL_SETS = (
    TOOLS,
    [*TOOLS[:2], {**TOOLS[2], "description": "Find files by pattern."}],
    [TOOLS[2], TOOLS[0], TOOLS[1]],
)
TASKS = (
    "Fix the parser.",
    "Now add a test for it.",
    "Thanks. Next, rename the module.",
    "Please always provide EXACTLY ONE action in triple backticks.",  # a harness's note
)


def _step(rng: random.Random, n: int, ids: list[str]) -> list[Message]:
    """An assistant step with one or two calls and their results."""
    calls, results = [], []
    for k in range(rng.choice((1, 1, 2))):
        path = rng.choice(PATHS)
        kind = rng.choice(("read", "read", "read", "edit"))
        call = ToolCall(id=f"c{n}_{k}", name="read_file", arguments=f'{{"path": "{path}"}}')
        if kind == "read" and ids and rng.random() < 0.15:
            content = f"{REUSE_PREFIX}{rng.choice(ids)}] {path} is unchanged"
        else:
            content = f"{kind} {path} #{n}: " + "line of code " * rng.randint(5, 120)
        evidence = Evidence(kind=kind, path=path, ok=rng.random() < 0.9)
        calls.append(call)
        results.append(
            Message(role="tool", content=content, tool_call_id=call.id, evidence=evidence)
        )
    thought = f"Step {n}: " + "because " * rng.randint(0, 40)
    if rng.random() < 0.4:  # an open task the summary keeps (the recitation plan shows it)
        thought += f"\nNext, check {rng.choice(PATHS)} again."
    return [Message(role="assistant", content=thought, tool_calls=tuple(calls)), *results]


def _grow(rng: random.Random, items: list[Item], prefix: str) -> list[Item]:
    """A few more messages: a tool step, now and then a user message or an orphan."""
    n = len(items)
    ids = [i.id for i in items]
    roll = rng.random()
    if roll < 0.15:  # a new task, often opening a new episode
        new = [Message(role="user", content=rng.choice(TASKS))]
        if rng.random() < 0.7:
            args = json.dumps({"title": f"task {n}", "episode_action": "new_topic"})
            call = ToolCall(id=f"t{n}", name="set_session_title", arguments=args)
            new.append(Message(role="assistant", content="", tool_calls=(call,)))
            new.append(Message(role="tool", content="ok", tool_call_id=call.id))
    elif roll < 0.2:
        new = [Message(role="tool", content="late output " * 20, tool_call_id="gone")]
    elif roll < 0.23:
        new = [Message(role="system", content="note from the operator")]
    elif roll < 0.26:  # a later call with the orphan's id: the orphan's label names it
        call = ToolCall(id="gone", name=rng.choice(("bash", "glob")), arguments="{}")
        new = [Message(role="assistant", content="again", tool_calls=(call,))]
        new.append(Message(role="tool", content="done", tool_call_id="gone"))
    else:
        new = _step(rng, n, ids)
    turn = items[-1].turn if items else 0
    out = list(items)
    for m in new:
        turn += m.role == "user"
        out.append(Item(id=f"{prefix}{len(out)}", seq=len(out) + 1, turn=turn, message=m))
    return out


def _act(rng: random.Random, state: ContextState, items: list[Item]) -> ContextState:
    """A user action on a random message, when the node allows it."""
    if not items:
        return state
    action = rng.choice(("pin", "unpin", "drop", "stub", "restore"))
    target = rng.choice(items).id
    if state.summary is not None and rng.random() < 0.1:
        target = state.summary.node_id
    try:
        state, _ = apply_action(state, items, target, action, 1)  # type: ignore[arg-type]
    except (KeyError, ValueError):
        pass
    return state


def _edit(rng: random.Random, items: list[Item]) -> list[Item]:
    """An earlier message edited in place (same id), or another branch from the middle."""
    if len(items) < 4:
        return items
    cut = rng.randrange(1, len(items))
    if rng.random() < 0.5:
        old = items[cut]
        message = old.message.model_copy(update={"content": old.message.content + " (edited)"})
        return [*items[:cut], old.model_copy(update={"message": message}), *items[cut + 1 :]]
    return _grow(rng, items[:cut], prefix=f"b{cut}_")


def _check_work(tape: Work, plain: Work, rng: random.Random) -> None:
    assert tape.nodes == plain.nodes
    assert tape.groups == plain.groups
    assert tape.protected == plain.protected
    assert tape.calls == plain.calls
    assert tape.superseded == plain.superseded
    assert tape.used == plain.used
    assert tape.summary_at == plain.summary_at
    assert tape.wire() == plain.wire()
    assert tape.fresh_tokens() == plain.fresh_tokens()
    ids = [n.item.id for n in plain.nodes]
    for _ in range(3):
        some = set(rng.sample(ids, min(len(ids), rng.randint(0, 3))))
        for changes in (False, True):
            got = tape.tokens_before(some, summary_changes=changes)
            assert got == plain.tokens_before(some, summary_changes=changes)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans(), st.sampled_from([6_000, 9_000, 40_000]))
def test_the_tape_assembles_what_a_fresh_assembly_does(
    seed: int, episodes: bool, window: int
) -> None:
    rng = random.Random(seed)
    counter = char_counter()
    memo = AssemblyMemo()
    knobs = ContextSettings(
        gc_trigger=0.6,
        compact_trigger=0.85,
        compact_target=0.45,
        keep_recent_groups=rng.choice((1, 2, 3)),
        summary_mode="deterministic",
        min_rewrite_tokens=rng.choice((200, 2_000)),
    )
    items: list[Item] = []
    frame: dict[str, Any] = {"parts": PARTS[0], "tools": TOOLS, "hidden": [], "family": "openai"}
    branches: list[list[Item]] = []  # logs left for another branch
    state = ContextState()
    for call in range(24):
        roll = rng.random()
        if roll < 0.6 or not items:
            items = _grow(rng, items, prefix="m")
        elif roll < 0.75:
            state = _act(rng, state, items)
        elif roll < 0.8 and state.stubs:  # a stub's text written again (same id, other bytes)
            key = rng.choice(sorted(state.stubs))
            entry = state.stubs[key]
            again = entry.model_copy(update={"text": entry.text + " (again)"})
            state = state.model_copy(update={"stubs": {**state.stubs, key: again}})
        elif roll < 0.86:
            branches.append(items)
            items = _edit(rng, items)
        elif roll < 0.9 and branches:  # back to a branch left earlier (the state stays)
            items = branches.pop(rng.randrange(len(branches)))
        elif roll < 0.95:  # the daemon reads its state back from JSON: equal, not the same
            state = ContextState.model_validate(state.model_dump(mode="json"))
        else:  # the log read again: new items of the same messages, now and then renumbered
            shift = rng.choice((0, 0, 1))
            items = [i.model_copy(update={"turn": i.turn + shift}) for i in items]
        if rng.random() < 0.15:  # what the frame is made of changes now and then
            frame = {
                "parts": rng.choice(PARTS),
                "tools": rng.choice(TOOL_SETS),
                "hidden": rng.choice(([], ["glob"])),
                "family": rng.choice(("openai", "anthropic")),
            }
            knobs = knobs.model_copy(update={"recitation": rng.random() < 0.5})
        base = make_input(
            items,
            state=state,
            window=window,
            reserve=1_000,
            settings=knobs,
            counter=counter,
            parts=list(frame["parts"]),
            tools=[dict(t) for t in frame["tools"]],  # new objects every call, as the daemon
            hidden=list(frame["hidden"]),
            family=str(frame["family"]),
        )
        base = base.model_copy(
            update={"turn": call + 1, "episodes": EpisodeSettings() if episodes else None}
        )
        taped = base.model_copy(update={"memo": memo})
        if rng.random() < 0.3:  # the analysis itself, besides the whole call
            _check_work(analyse(taped, state, TOOLS), analyse(base, state, TOOLS), rng)
        plain, incremental = assemble(base), assemble(taped)
        assert incremental.messages == plain.messages
        assert incremental.ledger == plain.ledger
        assert incremental == plain
        state = incremental.state


def test_a_rewrite_rebuilds_only_the_nodes_it_changes() -> None:
    """A pin changes one node of the tape; the others are the very objects of the
    call before (nothing else was rebuilt)."""
    rng = random.Random(7)
    items: list[Item] = []
    for _ in range(30):
        items = _grow(rng, items, prefix="m")
    memo = AssemblyMemo()
    inp = make_input(items, counter=char_counter()).model_copy(update={"memo": memo})
    before = analyse(inp, inp.state, TOOLS)
    tool = next(n.item.id for n in before.nodes if n.item.message.role == "tool")
    state, _ = apply_action(inp.state, items, tool, "pin", 1)
    after = analyse(inp, state, TOOLS)
    changed = [b.item.id for b, a in zip(before.nodes, after.nodes, strict=True) if a is not b]
    assert changed == [tool]
    assert after.nodes[[n.item.id for n in after.nodes].index(tool)].state == "pinned"


def test_a_log_that_repeats_an_id_assembles_as_without_the_tape() -> None:
    """A hostile log may carry one message id twice: the tape gives up its
    per-id shortcuts there and still assembles what a memo-free call does."""
    rng = random.Random(3)
    items: list[Item] = []
    for _ in range(12):
        items = _grow(rng, items, prefix="m")
    twin = next(i for i in items if i.message.role == "tool")
    items.append(twin.model_copy(update={"seq": len(items) + 1}))
    stub = StubEntry(text="[stubbed]", reason="by hand", origin="user", tokens_before=9, turn=1)
    states = [
        ContextState(),
        ContextState(pins=[twin.id]),
        ContextState(stubs={twin.id: stub}),
        ContextState(drops=[twin.id]),
        ContextState(),
    ]
    memo = AssemblyMemo()
    knobs = ContextSettings(gc_trigger=0.5, compact_trigger=0.9, summary_mode="deterministic")
    for state in states:
        base = make_input(items, state=state, window=8_000, reserve=1_000, settings=knobs)
        plain = assemble(base)
        assert assemble(base.model_copy(update={"memo": memo})) == plain
        assert [r.state for r in plain.ledger if r.id == twin.id]  # the twin is in it
