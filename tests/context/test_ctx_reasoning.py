"""Old reasoning condensed below the GC trigger: the agent's own text of steps it
has acted on becomes a one-line marker in the same batch as stale outputs, its
tool calls stay, and the protected tail and turn-ending replies stay whole."""

from __future__ import annotations

from ctx_helpers import assert_paired, items_of, make_input, step, user

from bonsai.core.context import assemble
from bonsai.core.context.pricing import FAMILY_RULES
from bonsai.core.context.text import STUB_PREFIX
from bonsai.domain import Message
from bonsai.settings import ContextSettings

BALANCED = ContextSettings()  # the default preset: payback_horizon 0.5
WINDOW = 400_000  # far below the GC trigger: only the economic batch can rewrite


def _plan(n: int) -> str:
    return f"Step {n}: the parser's tokenizer drops the comma here. " + "Reasoning. " * 120


def _chatty(steps: int, *, answer: bool = False) -> list[Message]:
    """A task, then ``steps`` steps whose reasoning is long and whose outputs are small."""
    messages = [user("Fix the parser.")]
    for n in range(steps):
        pair = step(n, f"ok {n}")
        pair[0] = pair[0].model_copy(update={"content": _plan(n)})
        messages += pair
        if answer and n == 1:  # a reply that ends a turn, then the person again
            messages += [Message(role="assistant", content="Done: " + "d" * 1_200)]
            messages += [user("Now the lexer.")]
    return messages


def test_a_long_chatty_session_condenses_its_old_reasoning_in_one_batch() -> None:
    items = items_of(_chatty(40))
    result = assemble(make_input(items, window=WINDOW, settings=BALANCED))
    kinds = [r.kind for r in result.records]
    assert kinds.count("gc") == 1
    condensed = [
        m for m in result.messages if m.role == "assistant" and m.content.startswith(STUB_PREFIX)
    ]
    assert len(condensed) == 37  # every step but the 3 protected recent groups
    assert all(m.tool_calls for m in condensed)  # the calls stay: what was done, in order
    first = condensed[0].content
    assert "reasoning condensed" in first and "Step 0: the parser's tokenizer" in first
    assert len(first) < 200
    tail = [m for m in result.messages if m.role == "assistant"][-3:]
    assert [m.content for m in tail] == [_plan(n) for n in (37, 38, 39)]
    assert_paired(result.messages)
    # the whole text is what recall and /ctx give back: the state keeps its size
    stubs = result.state.stubs
    assert all(e.reason == "reasoning of a step already acted on" for e in stubs.values())


def test_a_reply_that_ended_a_turn_is_never_condensed() -> None:
    items = items_of(_chatty(40, answer=True))
    result = assemble(make_input(items, window=WINDOW, settings=BALANCED))
    answers = [m for m in result.messages if m.role == "assistant" and not m.tool_calls]
    assert [m.content[:6] for m in answers] == ["Done: "]


def test_a_young_chatty_session_keeps_its_cache_until_it_expires() -> None:
    """Five steps of reasoning: the two outside the protected tail save less than
    a rewrite below the trigger must; after a pause past the cache's TTL the
    rewrite is free, and they are condensed then."""
    inp = make_input(items_of(_chatty(5)), window=WINDOW, settings=BALANCED)
    anthropic = inp.model_copy(update={"pricing": FAMILY_RULES["anthropic"]})  # a 5-minute TTL
    warm = assemble(anthropic.model_copy(update={"idle_seconds": 30.0}))
    assert warm.records == [] and warm.state.stubs == {}
    cold = assemble(anthropic.model_copy(update={"idle_seconds": 301.0}))
    assert sorted(cold.state.stubs) == ["m2", "m4"]
    assert all("taken at cache expiry" in e.reason for e in cold.state.stubs.values())
    assert [r.kind for r in cold.records].count("expiry") == 1
