"""Scripts: what the simulated model answers, and when it fails.

For each inference request, in order:

1. a fault listed for this request number (1-based) under ``faults``;
2. the first ``rule`` whose pattern matches the last user/tool message and
   that has uses left (it may carry a reply, a fault, or both);
3. the next unused ``step`` (a faulted request does not use it up);
4. otherwise an echo of the last message.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from bonsai.sim.faults import Fault

StopReason = Literal["end_turn", "tool_use", "max_tokens"]
DEFAULT_MODELS = ["gpt-4o-mini", "gpt-4o", "deepseek-chat", "claude-sonnet-4-6", "claude-haiku-4-5"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolCallSpec(_Strict):
    name: str = Field(min_length=1)
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    id: str | None = None

    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False, separators=(",", ":"))


class Reply(_Strict):
    text: str = ""
    tool_calls: list[ToolCallSpec] = Field(default_factory=list)
    stop_reason: StopReason | None = None  # None: tool_use if there are calls, else end_turn

    @property
    def effective_stop(self) -> StopReason:
        return self.stop_reason or ("tool_use" if self.tool_calls else "end_turn")


class Rule(_Strict):
    match: str
    regex: bool = False
    reply: Reply | None = None
    fault: Fault | None = None
    times: int | None = Field(None, ge=1)

    @model_validator(mode="after")
    def _check(self) -> Rule:
        if self.reply is None and self.fault is None:
            raise ValueError("a rule needs a reply, a fault, or both")
        if self.regex:
            try:
                re.compile(self.match)
            except re.error as exc:
                raise ValueError(f"invalid regex {self.match!r}: {exc}") from None
        return self

    def matches(self, text: str) -> bool:
        return bool(re.search(self.match, text)) if self.regex else self.match in text


class Script(_Strict):
    steps: list[Reply] = Field(default_factory=list)
    rules: list[Rule] = Field(default_factory=list)
    faults: dict[int, Fault] = Field(default_factory=dict)
    latency_ms: float = Field(0.0, ge=0)  # pause before each streamed event
    require_api_key: str | None = None
    models: list[str] = Field(default_factory=lambda: list(DEFAULT_MODELS))
    # False: OpenAI-wire streams carry no usage, as from a local server that
    # ignores ``stream_options.include_usage`` (llama-cpp-python's, for one)
    usage: bool = True


class ScriptError(ValueError):
    pass


def load_script(path: str | Path) -> Script:
    """Read a script from a JSON file, with an error that names the file and field."""
    try:
        return Script.model_validate_json(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ScriptError(f"cannot read script {path}: {exc.strerror}") from None
    except ValidationError as exc:
        raise ScriptError(f"invalid script {path}:\n{exc}") from None


def echo_reply(last_role: str, last_text: str) -> Reply:
    if last_role == "tool":
        return Reply(text=f"Got the tool result ({len(last_text)} characters).")
    if not last_text.strip():
        return Reply(text="Hello from the bonsai simulator.")
    snippet = " ".join(last_text.split())[:200]
    return Reply(text=f"You said: {snippet}")


@dataclass(frozen=True)
class Decision:
    reply: Reply
    fault: Fault | None
    source: str  # "step 1", "rule 0", "echo"


@dataclass
class ScriptRunner:
    script: Script
    served: int = 0
    next_step: int = 0
    rule_uses: dict[int, int] = field(default_factory=dict)

    def decide(self, last_role: str, last_text: str) -> Decision:
        self.served += 1
        fault = self.script.faults.get(self.served)
        reply, source = None, "echo"
        rule_index = self._match(last_text)
        if rule_index is not None:
            rule = self.script.rules[rule_index]
            self.rule_uses[rule_index] = self.rule_uses.get(rule_index, 0) + 1
            fault = fault or rule.fault
            reply, source = rule.reply, f"rule {rule_index}"
        if reply is None and self.next_step < len(self.script.steps):
            reply, source = self.script.steps[self.next_step], f"step {self.next_step + 1}"
            if fault is None:
                self.next_step += 1
        return Decision(reply or echo_reply(last_role, last_text), fault, source)

    def _match(self, text: str) -> int | None:
        for index, rule in enumerate(self.script.rules):
            used = self.rule_uses.get(index, 0)
            if (rule.times is None or used < rule.times) and rule.matches(text):
                return index
        return None
