"""recall: page an episode back, or search the whole session history."""

from __future__ import annotations

from bonsai.agent.tools.base import (
    Args,
    Tool,
    ToolContext,
    ToolFailure,
    ToolResult,
    arg_int,
    schema,
)
from bonsai.core.recall import repeat_pointer


async def recall(ctx: ToolContext, args: Args) -> ToolResult:
    episode = arg_int(args, "episode")
    query = args.get("query")
    if episode is None and not (isinstance(query, str) and query.strip()):
        raise ToolFailure("give either episode (a number) or query (text)")
    page = ctx.services["recall"](episode, query, arg_int(args, "cursor", 0) or 0)
    earlier = [
        s.message.content
        for s in ctx.history
        if s.message.role == "tool" and s.message.name == "recall"
    ]
    return ToolResult(repeat_pointer(page, earlier) or page)


TOOL = Tool(
    "recall",
    "Bring back earlier work of this session: {episode: N} pages an archived episode's "
    "original messages and tool outputs (use the cursor it returns for more); "
    "{query: text} searches the whole session history, including what was archived or cleared.",
    schema(
        {
            "episode": {"type": "integer"},
            "cursor": {"type": "integer"},
            "query": {"type": "string"},
        },
        [],
    ),
    recall,
)
