"""Printing a streamed turn in the terminal (shared by `bonsai chat` and `bonsai demo`)."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO


def _short(value: Any, limit: int = 90) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class TurnPrinter:
    """Turns bonsai/chat/event notifications into readable terminal output."""

    def __init__(self, out: TextIO = sys.stdout, color: bool | None = None) -> None:
        self.out = out
        self.color = out.isatty() if color is None else color
        self.in_text = False
        self.finished: dict[str, str] = {}

    def _dim(self, text: str) -> str:
        return f"\033[2m{text}\033[0m" if self.color else text

    def _line(self, text: str) -> None:
        if self.in_text:
            self.out.write("\n")
            self.in_text = False
        self.out.write(text + "\n")
        self.out.flush()

    def event(self, params: dict[str, Any]) -> None:
        kind = params.get("kind")
        if kind == "delta":
            self.out.write(params.get("text", ""))
            self.out.flush()
            self.in_text = True
        elif kind == "toolCall":
            self._line(self._dim(f"  ⚙ {params.get('name')} {_short(params.get('args'))}"))
        elif kind == "toolResult":
            first = (params.get("result") or "").strip().splitlines()[:1]
            mark = "✗" if params.get("isError") else "✓"
            self._line(self._dim(f"    {mark} {_short(first[0] if first else '(empty)')}"))
        elif kind == "done":
            self._line("")
            self.finished[params["turnId"]] = "done"
        elif kind == "notice":
            self._line(f"  i {params.get('message')}")
        elif kind == "error":
            self._line(f"  ! {params.get('message')}")
            self.finished[params["turnId"]] = "error"

    def approval(self, params: dict[str, Any], approve: bool) -> dict[str, bool]:
        verdict = "approved" if approve else "denied"
        self._line(f"  ? approval for {params.get('tool')} → {verdict}")
        diff = params.get("diff")
        if diff:
            for line in str(diff).splitlines()[:20]:
                self._line(self._dim(f"    {line}"))
        return {"approved": approve}
