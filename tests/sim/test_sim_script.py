"""Script decisions: faults by request number, rules, steps, echo; loading files."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from bonsai.sim import Fault, Reply, Rule, Script, ScriptError, ToolCallSpec, load_script
from bonsai.sim.script import ScriptRunner


def test_steps_are_used_in_order_then_the_echo_takes_over() -> None:
    runner = ScriptRunner(Script(steps=[Reply(text="one"), Reply(text="two")]))
    replies = [runner.decide("user", "hello there").reply.text for _ in range(3)]
    assert replies == ["one", "two", "You said: hello there"]


def test_a_fault_does_not_use_up_the_step() -> None:
    runner = ScriptRunner(Script(steps=[Reply(text="one")], faults={1: Fault(kind="rate_limit")}))
    first, second = runner.decide("user", "x"), runner.decide("user", "x")
    assert first.fault is not None and first.fault.kind == "rate_limit"
    assert second.fault is None and second.reply.text == "one" and second.source == "step 1"


def test_rules_match_substrings_or_regexes_and_respect_times() -> None:
    script = Script(
        rules=[
            Rule(match="deploy", reply=Reply(text="no deploys"), times=1),
            Rule(
                match=r"^run (\w+)$",
                regex=True,
                reply=Reply(tool_calls=[ToolCallSpec(name="bash")]),
            ),
        ],
        steps=[Reply(text="step")],
    )
    runner = ScriptRunner(script)
    assert runner.decide("user", "please deploy").reply.text == "no deploys"
    assert runner.decide("user", "please deploy").reply.text == "step"  # rule used up
    decision = runner.decide("tool", "run tests")
    assert decision.source == "rule 1" and decision.reply.tool_calls[0].name == "bash"


def test_a_rule_may_carry_only_a_fault() -> None:
    runner = ScriptRunner(
        Script(rules=[Rule(match="boom", fault=Fault(kind="server_error"), times=1)])
    )
    assert runner.decide("user", "boom").fault is not None
    assert runner.decide("user", "boom").fault is None


def test_echo_for_tool_results_and_empty_input() -> None:
    runner = ScriptRunner(Script())
    assert runner.decide("tool", "x" * 42).reply.text == "Got the tool result (42 characters)."
    assert "Hello" in runner.decide("user", "  ").reply.text


def test_stop_reason_follows_the_reply() -> None:
    assert Reply(text="a").effective_stop == "end_turn"
    assert Reply(tool_calls=[ToolCallSpec(name="x")]).effective_stop == "tool_use"
    assert Reply(text="a", stop_reason="max_tokens").effective_stop == "max_tokens"


def test_bad_rules_are_rejected() -> None:
    with pytest.raises(ValidationError, match="reply, a fault"):
        Rule(match="x")
    with pytest.raises(ValidationError, match="invalid regex"):
        Rule(match="(", regex=True, reply=Reply())


def test_scripts_load_from_json_and_errors_name_the_file(tmp_path: Path) -> None:
    good = tmp_path / "s.json"
    good.write_text(
        '{"steps": [{"text": "hi", "tool_calls": [{"name": "ls", "arguments": {"dir": "."}}]}],'
        ' "faults": {"2": {"kind": "drop", "after_events": 3}}, "latency_ms": 5}'
    )
    script = load_script(good)
    assert script.steps[0].tool_calls[0].arguments_json() == '{"dir":"."}'
    assert script.faults[2].kind == "drop" and script.latency_ms == 5
    bad = tmp_path / "bad.json"
    bad.write_text('{"steps": [{"txt": "typo"}]}')
    with pytest.raises(ScriptError, match=r"bad\.json"):
        load_script(bad)
    with pytest.raises(ScriptError, match="cannot read"):
        load_script(tmp_path / "missing.json")
