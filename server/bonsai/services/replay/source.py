"""A recorded session as the pipeline sees it: a persona and a log of items.

Leading system messages of a recording are the agent's own system prompt:
they become the persona part (joined in order). Everything else becomes one
item per message, numbered like the session log (``seq`` from 1, ``turn`` =
the number of user messages so far).

``recorded`` says the tool outputs are as the agent recorded them (a file, or
a session imported from one), not as bonsai's own turns stored them: the
replay then passes each through the same execution-time redaction, truncation
and spill as a live tool output (:func:`bonsai.core.turn.tool_finish.finish_output`).
"""

from __future__ import annotations

from dataclasses import dataclass

from bonsai.core.context import Item, SystemPart
from bonsai.domain import Message

PERSONA_ID = "sys:persona"


@dataclass(frozen=True)
class ReplaySource:
    persona: SystemPart | None
    items: list[Item]
    title: str = ""
    session_id: str = ""
    times: list[float | None] | None = None  # per item, epoch seconds, when the recording has them
    recorded: bool = True

    @property
    def steps(self) -> list[int]:
        """Positions (in ``items``) of the assistant messages: one model call each."""
        return [i for i, item in enumerate(self.items) if item.message.role == "assistant"]


def source_from_messages(
    messages: list[Message],
    ids: list[str] | None = None,
    *,
    title: str = "",
    session_id: str = "",
    times: list[float | None] | None = None,
    recorded: bool = True,
) -> ReplaySource:
    """Split ``messages`` into persona and items; ``ids`` name the items
    (stored message ids), default ``m1``, ``m2``…; ``times`` are the messages'
    timestamps (epoch seconds) when the recording has them."""
    if times is not None and len(times) != len(messages):
        raise ValueError(f"{len(times)} timestamps for {len(messages)} messages")
    if ids is not None and len(ids) != len(messages):
        raise ValueError(f"{len(ids)} ids for {len(messages)} messages")
    lead = 0
    while lead < len(messages) and messages[lead].role == "system":
        lead += 1
    persona = None
    if lead:
        text = "\n\n".join(m.content for m in messages[:lead])
        persona = SystemPart(id=PERSONA_ID, label="recorded system prompt", text=text)
    items: list[Item] = []
    turn = 0
    for pos in range(lead, len(messages)):
        message = messages[pos]
        turn += message.role == "user"
        item_id = ids[pos] if ids is not None else f"m{pos + 1}"
        items.append(Item(id=item_id, seq=pos + 1, turn=turn, message=message))
    kept = times[lead:] if times is not None else None
    return ReplaySource(
        persona=persona,
        items=items,
        title=title,
        session_id=session_id,
        recorded=recorded,
        times=kept,
    )
