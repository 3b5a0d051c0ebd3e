"""Printing a streamed turn in the terminal (shared by `bonsai chat` and `bonsai demo`)."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from bonsai.cli.previews import preview
from bonsai.cli.terminal_text import shown


def _short(value: Any, limit: int = 90) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cut(line: str, limit: int) -> str:
    """One line kept as it is (indentation too), cut at ``limit``."""
    line = line.rstrip().replace("\t", "    ")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def describe_call(tool: str | None, args: Any) -> list[str]:
    """A tool call as a person reads it: the command, the path, else the arguments."""
    args = args if isinstance(args, dict) else {}
    if tool == "bash" and isinstance(args.get("command"), str):
        return [f"$ {args['command']}"]
    if tool in ("edit_file", "write_file") and isinstance(args.get("path"), str):
        return [f"file: {args['path']}"]
    return [f"{key}: {_short(value, 200)}" for key, value in args.items()] or ["(no arguments)"]


class TurnPrinter:
    """Turns bonsai/chat/event notifications into readable terminal output."""

    def __init__(self, out: TextIO = sys.stdout, color: bool | None = None) -> None:
        self.out = out
        self.color = out.isatty() if color is None else color
        self.in_text = False
        self._overwrite = False
        self.finished: dict[str, str] = {}
        self._progress: dict[str, str] = {}  # token -> title
        self._calls: dict[str, tuple[str | None, Any]] = {}  # tool call id -> (name, args)

    def _dim(self, text: str) -> str:
        """``text`` (escapes shown) dimmed on a colour terminal."""
        text = shown(text)
        return f"\033[2m{text}\033[0m" if self.color else text

    def aside(self, text: str) -> None:
        """A dimmed line of its own (a tool call, a notice, a retry, a progress step)."""
        self._line(self._dim(text))

    def _line(self, text: str) -> None:
        """One line, printed as given: callers pass ``_dim`` or ``shown`` text."""
        if self._overwrite:  # a progress line being updated in place: replace it
            self.out.write("\r\033[K")
            self._overwrite = False
        if self.in_text:
            self.out.write("\n")
            self.in_text = False
        self.out.write(text + "\n")
        self.out.flush()

    def event(self, params: dict[str, Any]) -> None:
        kind = params.get("kind")
        if kind == "delta":
            self.out.write(shown(str(params.get("text", ""))))
            self.out.flush()
            self.in_text = True
        elif kind == "toolCall":
            self._calls[str(params.get("toolCallId"))] = (params.get("name"), params.get("args"))
            self.aside(f"  ⚙ {params.get('name')} {_short(params.get('args'))}")
        elif kind == "toolResult":
            name, args = self._calls.get(str(params.get("toolCallId")), (None, None))
            name = name or params.get("name")
            mark = "✗" if params.get("isError") else "✓"
            for i, line in enumerate(preview(name, args, params.get("result") or "")):
                self.aside(f"    {mark if i == 0 else ' '} {_cut(line, 110)}")
        elif kind == "notice":
            self.aside(f"  · {params.get('message')}")
        elif kind == "retry":
            self.aside(f"  » {params.get('text')}")
        elif kind == "done":
            self._line("")
            self.finished[params["turnId"]] = "done"
        elif kind == "error":
            self._line(shown(f"  ! {params.get('message')}"))
            self.finished[params["turnId"]] = "error"
        elif kind == "cancelled":  # not an error: the user (here or in an editor) asked
            self.aside("  · cancelled")
            self.finished[params["turnId"]] = "cancelled"

    def end_line(self) -> None:
        """End a reply cut off mid-line, so what follows starts on a line of its own."""
        if self._overwrite or self.in_text:
            self._line("")

    def progress(self, params: dict[str, Any]) -> None:
        """``$/progress`` (work done progress) as one line when it begins and ends."""
        token = str(params.get("token"))
        value = params.get("value") or {}
        kind = value.get("kind")
        if kind == "begin":
            title = str(value.get("title") or "working")
            self._progress[token] = title
            message = f": {value['message']}" if value.get("message") else ""
            self.aside(f"  … {title}{message}")
        elif kind == "report" and self.color and token in self._progress:
            percent = value.get("percentage")
            done = f" {percent}%" if percent is not None else ""
            message = f" {value['message']}" if value.get("message") else ""
            line = self._dim(f"  … {self._progress[token]}{done}{message}")
            self.out.write(f"\r{line}\033[K")
            self.out.flush()
            self._overwrite = True
        elif kind == "end":
            title = self._progress.pop(token, "work")
            message = f": {value['message']}" if value.get("message") else ""
            self.aside(f"  ✓ {title} done{message}")

    def approval(self, params: dict[str, Any], approve: bool, why: str = "") -> dict[str, bool]:
        """Report an approval answered without asking (``--yes``, or no terminal).
        Approved, the call line above and its result below say the rest."""
        verdict = "approved" if approve else "denied"
        self._line(shown(f"  ? approval for {params.get('tool')} → {verdict}{why}"))
        if not approve:
            self.show_call(params)
        return {"approved": approve}

    def show_call(self, params: dict[str, Any]) -> None:
        """The tool, its arguments and (for edits) the diff."""
        diff = params.get("diff")
        described = describe_call(params.get("tool"), params.get("args"))
        if not (diff and params.get("tool") == "bash" and str(diff).strip() == described[0]):
            for line in described:
                self.aside(f"    {line}")
        if diff:
            lines = str(diff).rstrip("\n").split("\n")  # a lone \r stays in its line, shown
            for line in lines[:40]:
                self.aside(f"    {line}")
            if len(lines) > 40:
                self.aside(f"    … {len(lines) - 40} more diff lines")
