"""What every tool is: a name, a JSON schema, an approval need, and a coroutine."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from bonsai.domain import Evidence, StoredMessage
from bonsai.services.store.turns import ToolOutputStore
from bonsai.settings import Settings

if TYPE_CHECKING:  # the service itself (and numpy, through its embedder) only where it runs
    from bonsai.services.memory.service import MemoryService

Args = dict[str, Any]
_S = TypeVar("_S")


class ToolFailure(Exception):
    """A tool could not do what was asked; the message goes back to the model."""


@dataclass(frozen=True)
class ToolResult:
    content: str
    evidence: Evidence | None = None
    is_error: bool = False
    redacted: int = 0  # secrets the tool already replaced in ``content``


class Recall(Protocol):
    """The recall tool's service: a message, an episode's page, or search hits."""

    def __call__(
        self, episode: int | None, query: str | None, cursor: int, *, message: str | None = None
    ) -> str: ...


@dataclass
class ToolServices:
    """What tools call back into; the session provides them for one turn. A tool
    whose service is missing (a bare context, as in tests) fails with a clear message."""

    rename: Callable[[str], None] | None = None
    save_todos: Callable[[list[dict[str, Any]]], None] | None = None
    tool_outputs: ToolOutputStore | None = None
    recall: Recall | None = None
    memory: MemoryService | None = None
    # a command started (pid, start time): recorded, so a crash then reads as unknown
    process_started: Callable[[int, int | None], None] | None = None


def need(service: _S | None, what: str) -> _S:
    """``service``, or a ToolFailure saying this session cannot ``what``."""
    if service is None:
        raise ToolFailure(f"this session cannot {what}")
    return service


@dataclass
class ToolContext:
    workspace: Path
    session_id: str
    turn_id: str
    settings: Settings
    history: list[StoredMessage] = field(default_factory=list)
    services: ToolServices = field(default_factory=ToolServices)


Run = Callable[[ToolContext, Args], Awaitable[ToolResult]]
Preview = Callable[[ToolContext, Args], str | None]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    run: Run
    needs_approval: bool = False
    preview: Preview | None = None  # a diff or command shown with the approval prompt

    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


def schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def parse_args(raw: str) -> Args:
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError as error:
        raise ToolFailure(f"arguments are not valid JSON: {error.msg}") from None
    if not isinstance(value, dict):
        raise ToolFailure("arguments must be a JSON object")
    return value


def arg_str(args: Args, name: str, required: bool = True) -> str:
    value = args.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and value == ""):
        raise ToolFailure(f"'{name}' must be a non-empty string")
    return value


def arg_int(args: Args, name: str, default: int | None = None) -> int | None:
    value = args.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolFailure(f"'{name}' must be an integer")
    return value
