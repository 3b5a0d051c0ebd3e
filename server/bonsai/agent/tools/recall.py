"""recall: fetch one earlier message exactly, page an episode back, or search the history."""

from __future__ import annotations

from bonsai.agent.tools.base import (
    Args,
    Tool,
    ToolContext,
    ToolFailure,
    ToolResult,
    arg_int,
    need,
    schema,
)
from bonsai.core.history.pages import repeat_pointer

ASK = "give one of message (an id), episode (a number) or query (text)"


async def recall(ctx: ToolContext, args: Args) -> ToolResult:
    episode = arg_int(args, "episode")
    query = args.get("query")
    message = args.get("message")
    if message is not None and not (isinstance(message, str) and message.strip()):
        raise ToolFailure("message must be a message id, as recall results name them")
    if message is None and episode is None and not (isinstance(query, str) and query.strip()):
        raise ToolFailure(ASK)
    cursor = arg_int(args, "cursor", 0) or 0
    page = need(ctx.services.recall, "recall history")(episode, query, cursor, message=message)
    earlier = [
        s.message.content
        for s in ctx.history
        if s.message.role == "tool" and s.message.name == "recall"
    ]
    return ToolResult(repeat_pointer(page, earlier) or page)


TOOL = Tool(
    "recall",
    "Bring back earlier work of this session: {query: text} searches the whole session "
    "history, including what was archived or cleared (long results come as excerpts or "
    "one-line pointers, never summaries); {message: id} returns one message's exact "
    "original text (use the cursor it returns for more); {episode: N} pages an archived "
    "episode's original messages and tool outputs.",
    schema(
        {
            "query": {"type": "string"},
            "message": {"type": "string"},
            "episode": {"type": "integer"},
            "cursor": {"type": "integer"},
        },
        [],
    ),
    recall,
)
