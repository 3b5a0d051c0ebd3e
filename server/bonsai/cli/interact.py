"""What the terminal client answers when the daemon asks it something.

Only ``bonsai/approval/request`` asks the user (the tool, its arguments and,
for edits, the diff). ``window/workDoneProgress/create`` is the daemon
announcing a progress token (e.g. the repository map being built): it is
acknowledged, and the ``$/progress`` that follows is shown as a progress line.
Anything else is refused as an unknown method.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from bonsai.cli.client import RpcError
from bonsai.cli.render import TurnPrinter
from bonsai.cli.terminal_text import shown

METHOD_NOT_FOUND = -32601


class ClientRequests:
    """``DaemonClient.on_request`` for the terminal: ``auto`` approves without asking."""

    def __init__(
        self,
        printer: TurnPrinter,
        *,
        auto: bool = False,
        interactive: bool | None = None,
        ask: Callable[[str], str] = input,
    ) -> None:
        self.printer = printer
        self.auto = auto
        self.interactive = sys.stdin.isatty() if interactive is None else interactive
        self.ask = ask

    def __call__(self, method: str, params: dict[str, Any]) -> Any:
        if method == "window/workDoneProgress/create":
            return None
        if method == "bonsai/approval/request":
            return self.approval(params)
        raise RpcError(METHOD_NOT_FOUND, f"the terminal client does not handle {method}")

    def approval(self, params: dict[str, Any]) -> dict[str, bool]:
        if self.auto:
            return self.printer.approval(params, approve=True)
        if not self.interactive:
            why = " (no terminal to ask on; pass --yes to approve edits and commands)"
            return self.printer.approval(params, approve=False, why=why)
        tool = shown(str(params.get("tool")), newlines=False)
        self.printer._line(f"  ? {tool} wants to run:")
        self.printer.show_call(params)
        try:
            answer = self.ask(f"  approve {tool}? [y/N] ").strip().lower()
        except EOFError:
            answer = ""
        return {"approved": answer in ("y", "yes")}


def notifications(printer: TurnPrinter) -> Callable[[str, dict[str, Any]], None]:
    """``DaemonClient.on_notification``: chat events and progress lines."""

    def on_notification(method: str, params: dict[str, Any]) -> None:
        if method == "bonsai/chat/event":
            printer.event(params)
        elif method == "$/progress":
            printer.progress(params)

    return on_notification
