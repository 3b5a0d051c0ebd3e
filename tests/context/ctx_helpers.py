"""Builders for context-pipeline tests: sessions, inputs, and a real counter.

The counter is bonsai's own ``TokenCounter`` over a one-character-per-token
estimator, so token counts are exact character counts plus OpenAI's message
framing (4 per message): tests can build savings of an exact size.
"""

from __future__ import annotations

from typing import Any

from bonsai.core.context import (
    AssembleInput,
    Assembly,
    Budget,
    ContextState,
    Item,
    SystemPart,
    system_text,
)
from bonsai.domain import Evidence, Message, ToolCall, content_hash
from bonsai.services.tokens import CharRatioEstimator, TokenCounter
from bonsai.settings import ContextSettings

PERSONA = SystemPart(id="sys:persona", label="persona", text="You are bonsai, a coding agent.")
VOLATILE = SystemPart(
    id="sys:volatile", label="volatile", text="## Volatile state\nGit: clean.", cacheable=False
)
TOOLS: list[dict[str, Any]] = [
    {"name": "read_file", "description": "Read a file.", "parameters": {"type": "object"}},
    {"name": "bash", "description": "Run a command.", "parameters": {"type": "object"}},
    {"name": "glob", "description": "Find files.", "parameters": {"type": "object"}},
]


# GC mechanics tested at fixed thresholds (the defaults follow the tuned preset):
# GC above 75%, compaction above 95% down to 50%, no rewrites below the trigger
GC_SETTINGS = ContextSettings(
    gc_trigger=0.75, compact_trigger=0.95, compact_target=0.50, payback_horizon=0.0
)


def char_counter() -> TokenCounter:
    return TokenCounter(CharRatioEstimator(1.0), family="openai")


def user(text: str) -> Message:
    return Message(role="user", content=text)


def step(
    n: int,
    output: str,
    *,
    path: str | None = None,
    lines: tuple[int, int] | None = None,
    kind: str = "read",
    ok: bool = True,
    name: str = "read_file",
) -> list[Message]:
    """An assistant message with one call and its result (with evidence when ``path``)."""
    args = f'{{"path": "{path}"}}' if path else f'{{"command": "step {n}"}}'
    call = ToolCall(id=f"call{n}", name=name, arguments=args)
    evidence = None
    if path is not None:
        lo, hi = lines if lines else (None, None)
        digest = content_hash(output) if kind == "read" and ok else None
        evidence = Evidence(
            kind=kind,
            path=path,
            start_line=lo,
            end_line=hi,  # type: ignore[arg-type]
            content_hash=digest,
            ok=ok,
        )
    return [
        Message(role="assistant", content=f"Step {n}.", tool_calls=(call,)),
        Message(role="tool", content=output, tool_call_id=call.id, name=name, evidence=evidence),
    ]


def items_of(messages: list[Message]) -> list[Item]:
    out: list[Item] = []
    turn = 0
    for i, message in enumerate(messages):
        turn += message.role == "user"
        out.append(Item(id=f"m{i + 1}", seq=i + 1, turn=turn, message=message))
    return out


def make_input(
    items: list[Item],
    *,
    state: ContextState | None = None,
    window: int = 100_000,
    reserve: int = 10_000,
    settings: ContextSettings | None = None,
    parts: list[SystemPart] | None = None,
    tools: list[dict[str, Any]] | None = None,
    family: str = "openai",
    counter: Any = None,
    turn: int = 1,
    hidden: list[str] | None = None,
) -> AssembleInput:
    return AssembleInput(
        parts=[PERSONA, VOLATILE] if parts is None else parts,
        tools=list(TOOLS) if tools is None else tools,
        items=items,
        state=state or ContextState(),
        budget=Budget(window=window, reserve=reserve),
        settings=settings or ContextSettings(),
        family=family,
        counter=counter or char_counter(),
        turn=turn,
        hidden_tools=hidden or [],
    )


def wire_tokens(counter: Any, assembly: Assembly) -> int:
    """The counter's count of exactly what the assembly sends."""
    total = 0
    if assembly.system:
        total += counter.count_message(
            Message(role="system", content=system_text(assembly.system))
        ).tokens
    total += sum(counter.count_message(m).tokens for m in assembly.messages)
    return total + counter.count_tools(assembly.tools).tokens


def on_wire_sum(assembly: Assembly) -> int:
    return sum(
        r.tokens for r in assembly.ledger if r.state in ("full", "pinned", "stubbed", "summarized")
    )


def assert_paired(messages: list[Message]) -> None:
    """Every tool result answers a call made earlier; every call is answered."""
    open_calls: set[str] = set()
    answered: set[str] = set()
    for message in messages:
        for call in message.tool_calls:
            open_calls.add(call.id)
        if message.role == "tool":
            assert message.tool_call_id in open_calls, f"orphan result {message.tool_call_id}"
            answered.add(message.tool_call_id or "")
    assert open_calls == answered, f"unanswered calls {open_calls - answered}"


def big_session(steps: int, size: int, *, task: str = "Fix the parser.") -> list[Message]:
    """A user task then ``steps`` tool steps with outputs of ``size`` characters."""
    messages = [user(task)]
    for n in range(steps):
        messages += step(n, f"{n:04d}" + "x" * (size - 4), path=f"src/f{n}.py")
    return messages
