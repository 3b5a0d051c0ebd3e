"""memory_write: save one durable fact to the user or project memory store.

Auto-approved: it can only write inside the two memory folders (validated by
the memory service), and the user sees the result as a normal file diff plus
a ``remembered: …`` note.
"""

from __future__ import annotations

import copy
import functools

from pydantic import ValidationError

from bonsai.agent.tools.base import Args, Tool, ToolContext, ToolFailure, ToolResult, need
from bonsai.domain import Evidence
from bonsai.services.memory.store import MemoryStoreError
from bonsai.services.memory.write_tool import MemoryWriteArgs, tool_schema


async def memory_write(ctx: ToolContext, args: Args) -> ToolResult:
    service = need(ctx.services.memory, "write memory")
    try:
        plan = service.write(MemoryWriteArgs.model_validate(args))
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "arguments"
        raise ToolFailure(f"memory_write: {where}: {first['msg']}") from None
    except MemoryStoreError as error:
        raise ToolFailure(str(error)) from None
    return ToolResult(f"{plan.note}\n{plan.diff}", Evidence(kind="write", path=str(plan.path)))


@functools.cache
def _spec() -> dict[str, object]:
    return tool_schema()  # pydantic builds the JSON Schema: once, not per request


def memory_write_tool() -> Tool:
    spec = copy.deepcopy(_spec())
    return Tool(
        name=str(spec["name"]),
        description=str(spec["description"]),
        parameters=dict(spec["parameters"]),  # type: ignore[call-overload]
        run=memory_write,
    )
