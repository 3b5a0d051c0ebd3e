"""Old reasoning condensed: the agent's own words of steps it has acted on.

At a large window nothing forces a fold, and nearly half of what every call
re-sends is the agent's earlier reasoning (measured: docs/context.md). A step
whose calls ran and whose results are in the request has been acted on: its
text (the plan it wrote before the call) is replaced by a one-line marker
that keeps the step's first words, and its tool calls stay as they were, so
the request still shows what was done and in which order. The recall tool
finds the whole text (it is hidden from the window, ``hidden.py``).

Only outside the protected tail, only messages that carry tool calls (a reply
that ended a turn speaks to the person and stays), and only where the marker
saves at least ``MIN_GAIN`` tokens.
"""

from __future__ import annotations

from bonsai.core.context.context_state import StubEntry
from bonsai.core.context.text import STUB_PREFIX, one_line
from bonsai.core.context.view import Node, stubbed_message
from bonsai.core.context.work import Work

MIN_GAIN = 40  # tokens a condensed message must save (its marker costs about 25)
HEAD_CHARS = 80  # the first words kept
REASON = "reasoning of a step already acted on"


def condensed_text(content: str, tokens: int) -> str:
    head = one_line(content.strip(), HEAD_CHARS)
    return f"{STUB_PREFIX} reasoning condensed ({tokens:,} tokens; recall finds it): {head}"


def reasoning_candidates(work: Work) -> list[Node]:
    """The acted-on assistant messages outside the protected tail, in order."""
    return [
        node
        for node in work.nodes
        if node.state == "full"
        and node.item.message.role == "assistant"
        and node.item.message.tool_calls
        and node.item.id not in work.protected
        and node.tokens > MIN_GAIN
    ]


def condense(
    work: Work, nodes: list[Node], *, reason: str = ""
) -> tuple[dict[str, StubEntry], int]:
    """Condensed stubs for ``nodes`` that save at least ``MIN_GAIN`` each, and the
    saving (``reason``: why now, appended to the stubs' reason)."""
    chosen: dict[str, StubEntry] = {}
    saved = 0
    for node in nodes:
        text = condensed_text(node.item.message.content, node.full_tokens)
        _, tokens, _ = stubbed_message(node.item, text, work.inp.counter, work.inp.memo)
        if node.tokens - tokens < MIN_GAIN:
            continue
        chosen[node.item.id] = StubEntry(
            text=text,
            reason=REASON + (f" ({reason})" if reason else ""),
            origin="gc",
            tokens_before=node.full_tokens,
            turn=work.inp.turn,
        )
        saved += node.tokens - tokens
    return chosen, saved
