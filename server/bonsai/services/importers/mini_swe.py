"""mini-swe-agent ``.traj.json`` files, ``mini-swe-agent-1`` and ``mini-swe-agent-1.1``.

Both are ``{"info": {...}, "messages": [...], "trajectory_format": ...}``.
Messages are OpenAI chat messages with an ``extra`` field of mini-swe-agent's
own bookkeeping (ignored here).

- ``mini-swe-agent-1`` (v1.x): text actions. The assistant writes exactly one
  fenced ```` ```bash ```` block; the next user message is the command's output.
  The action becomes a synthetic ``bash`` call ``mini-<index>`` with arguments
  ``{"command": <action>}`` and its output the call's ``role="tool"`` result.
  An assistant reply without exactly one block (a format error) keeps no call,
  and the user message that answers it (the format-error notice) stays a user
  message, as the model saw it.
- ``mini-swe-agent-1.1`` (v2.x): tool-calling models record ``tool_calls`` and
  ``role: "tool"`` results, text models record text actions as above (also in
  ```` ```mswea_bash_command ```` fences). The run ends with a record whose role is
  ``exit`` (its ``extra.submission`` is the outcome); anything after it is left
  out with a warning.

``info.submission`` (or the exit record's) is kept as the run's outcome.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from bonsai.domain import Message, ToolCall
from bonsai.services.importers.common import check_run, title_from
from bonsai.services.importers.evidence import tool_evidence, with_hash
from bonsai.services.importers.jsonread import Loc, as_dict, as_list, load_json, opt_str
from bonsai.services.importers.linking import link_tool_results
from bonsai.services.importers.model import ImportedSession
from bonsai.services.importers.openai_fmt import parse_tool_calls
from bonsai.services.importers.parts import join_content
from bonsai.services.importers.shell import shell_evidence
from bonsai.services.importers.skipped import Skipped
from bonsai.services.importers.stamps import Stamps, record_time, response_time

ACTION = re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.DOTALL)
CHAT_ROLES = frozenset({"system", "user", "assistant", "tool"})


@dataclass
class _State:
    loc: Loc
    warnings: list[str]
    skipped: Skipped
    messages: list[Message] = field(default_factory=list)
    awaiting: ToolCall | None = None
    command: str = ""  # the text action ``awaiting`` runs
    calls: dict[str, ToolCall] = field(default_factory=dict)
    outcome: str | None = None


def is_mini_swe_agent(doc: Any) -> bool:
    fmt = doc.get("trajectory_format") if isinstance(doc, dict) else None
    return isinstance(fmt, str) and fmt.startswith("mini-swe-agent")


def parse(text: str, source: str, run: int = 0) -> ImportedSession:
    check_run(run, 1, source)
    loc = Loc(source)
    doc = as_dict(load_json(text, source), loc, "$")
    warnings: list[str] = []
    state = _State(loc, warnings, Skipped(source))
    items = as_list(doc.get("messages"), loc, "messages")
    stamps = Stamps()
    for index, item in enumerate(items):
        path = f"messages[{index}]"
        obj = as_dict(item, loc, path)
        stamps.sent(state.messages, response_time(obj))
        stamps.record(state.messages, record_time(obj))
        role = obj.get("role")
        if role == "exit":
            state.outcome = _exit_outcome(obj) or state.outcome
            if index + 1 < len(items):
                warnings.append(
                    f"{source}: left out {len(items) - index - 1} record(s) after the exit record"
                )
            break
        if role in CHAT_ROLES:
            _message(obj, path, index, state)
        else:
            state.skipped.add(str(role if role is not None else obj.get("type")))
    if not state.messages:
        raise loc.error("messages", "the trajectory has no message to import")
    state.skipped.report(warnings)
    info = doc.get("info")
    submission = info.get("submission") if isinstance(info, dict) else None
    messages = link_tool_results(state.messages, source, warnings)
    return ImportedSession(
        format="mini-swe-agent",
        title=title_from(messages, source),
        messages=messages,
        runs=1,
        source=source,
        warnings=warnings,
        outcome=submission if isinstance(submission, str) else state.outcome,
        times=stamps.result(messages),
    )


def _exit_outcome(obj: dict[str, Any]) -> str | None:
    extra = obj.get("extra")
    if isinstance(extra, dict) and isinstance(extra.get("submission"), str):
        return str(extra["submission"])
    content = obj.get("content")
    return content if isinstance(content, str) else None


def _message(obj: dict[str, Any], path: str, index: int, state: _State) -> None:
    loc = state.loc
    role = str(obj["role"])
    content, images = join_content(obj.get("content"), loc, f"{path}.content", state.warnings)
    awaiting, state.awaiting = state.awaiting, None
    if role == "assistant":
        state.messages.append(_assistant(obj, path, index, content, images, state))
    elif role == "tool":
        call_id = opt_str(obj, "tool_call_id", loc, path)
        call = state.calls.get(call_id or "")
        evidence = tool_evidence(call.name, call.arguments, content) if call else None
        state.messages.append(
            Message(
                role="tool",
                content=content,
                tool_call_id=call_id,
                name=call.name if call else opt_str(obj, "name", loc, path),
                evidence=evidence,
                images=images,
            )
        )
    elif role == "user" and awaiting is not None:
        evidence = with_hash(shell_evidence(state.command), content)
        state.messages.append(
            Message(
                role="tool",
                content=content,
                tool_call_id=awaiting.id,
                name=awaiting.name,
                evidence=evidence,
                images=images,
            )
        )
    else:
        state.messages.append(Message(role=role, content=content, images=images))  # type: ignore[arg-type]


def _assistant(
    obj: dict[str, Any], path: str, index: int, content: str, images: int, state: _State
) -> Message:
    calls = parse_tool_calls(obj, state.loc, path, state.warnings)
    if not calls:
        actions = ACTION.findall(content)
        if len(actions) == 1:
            call = ToolCall(
                id=f"mini-{index}",
                name="bash",
                arguments=json.dumps({"command": actions[0]}, ensure_ascii=False),
            )
            calls = (call,)
            state.awaiting, state.command = call, actions[0]
    state.calls.update((call.id, call) for call in calls)
    return Message(role="assistant", content=content, tool_calls=calls, images=images)
