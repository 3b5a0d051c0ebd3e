"""set_session_title, todo_write and read_tool_output: tools about the session itself."""

from __future__ import annotations

from bonsai.agent.tools.base import (
    Args,
    Tool,
    ToolContext,
    ToolFailure,
    ToolResult,
    arg_int,
    arg_str,
    need,
    schema,
)
from bonsai.core.turn.tool_output import page

EPISODE_ACTION = {
    "type": "string",
    "enum": ["new_topic", "same_topic"],
    "description": "new_topic when the user moved to a different task; same_topic to rename",
}


async def set_session_title(ctx: ToolContext, args: Args) -> ToolResult:
    title = arg_str(args, "title")[:120]
    rename = need(ctx.services.rename, "rename itself")
    rename(title)
    action = args.get("episode_action", "same_topic")
    if action not in ("new_topic", "same_topic"):
        raise ToolFailure("episode_action must be new_topic or same_topic")
    return ToolResult(f"session title set to {title!r} ({action})")


async def todo_write(ctx: ToolContext, args: Args) -> ToolResult:
    todos = args.get("todos")
    if not isinstance(todos, list) or not all(isinstance(t, dict) for t in todos):
        raise ToolFailure("todos must be a list of {content, status} objects")
    marks = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
    lines = []
    for todo in todos:
        status = str(todo.get("status", "pending"))
        if status not in marks:
            raise ToolFailure(f"unknown status {status!r}; use pending, in_progress or completed")
        lines.append(f"{marks[status]} {todo.get('content', '')}")
    need(ctx.services.save_todos, "keep a plan")(todos)
    return ToolResult("plan updated:\n" + "\n".join(lines))


async def read_tool_output(ctx: ToolContext, args: Args) -> ToolResult:
    call_id = arg_str(args, "id")
    full = need(ctx.services.tool_outputs, "read stored outputs").get(ctx.session_id, call_id)
    if full is None:
        raise ToolFailure(f"no stored output for tool call {call_id!r} in this session")
    offset = max(0, arg_int(args, "offset", 0) or 0)
    limit = max(1, arg_int(args, "limit", ctx.settings.tool_output.max_chars) or 1)
    grep = arg_str(args, "grep", required=False) or None
    return ToolResult(page(full, offset, limit, grep, ctx.settings.tool_output.max_chars))


TOOLS = [
    Tool(
        "set_session_title",
        "Name the session after the current task. Pass episode_action=new_topic when the "
        "user starts a different task, same_topic to rename the current one.",
        schema({"title": {"type": "string"}, "episode_action": EPISODE_ACTION}, ["title"]),
        set_session_title,
    ),
    Tool(
        "todo_write",
        "Replace the plan: a list of steps with status pending, in_progress or completed.",
        schema(
            {
                "todos": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string"},
                            "status": {"type": "string"},
                        },
                        "required": ["content", "status"],
                    },
                },
                "episode_action": EPISODE_ACTION,
            },
            ["todos"],
        ),
        todo_write,
    ),
    Tool(
        "read_tool_output",
        "Page back the full output of an earlier tool call that was truncated or cleared, "
        "by its tool-call id; offset/limit in characters, or grep for matching lines.",
        schema(
            {
                "id": {"type": "string"},
                "offset": {"type": "integer"},
                "limit": {"type": "integer"},
                "grep": {"type": "string"},
            },
            ["id"],
        ),
        read_tool_output,
    ),
]
