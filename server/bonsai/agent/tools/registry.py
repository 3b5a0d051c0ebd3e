"""The tool set of a session: built-ins minus hidden ones, reduced in smol mode."""

from __future__ import annotations

from bonsai.agent.tools import files, search, session, shell
from bonsai.agent.tools.base import Tool
from bonsai.errors import InvalidParams

SMOL_TOOLS = {"bash", "read_file", "edit_file", "todo_write", "set_session_title"}


def builtin_tools() -> list[Tool]:
    return [*files.TOOLS, *search.TOOLS, *shell.TOOLS, *session.TOOLS]


def validate_hidden(hidden: list[str], tools: list[Tool]) -> None:
    names = {t.name for t in tools}
    unknown = sorted(set(hidden) - names)
    if unknown:
        raise InvalidParams(
            f"unknown tool name(s) {unknown} in tools.hidden; valid: {', '.join(sorted(names))}"
        )


def session_tools(hidden: list[str], smol: bool, extra: list[Tool] | None = None) -> list[Tool]:
    tools = builtin_tools() + list(extra or [])
    validate_hidden(hidden, tools)  # against every tool: smol removing one is not an error
    if smol:
        tools = [t for t in tools if t.name in SMOL_TOOLS]
    return [t for t in tools if t.name not in set(hidden)]
