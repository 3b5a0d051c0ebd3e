"""One line when a running turn has been silent for a while, so a terminal that shows
nothing never looks hung: the provider has not answered yet (a slow or stuck server
waits up to ``providers.read_timeout_s`` before its first retry line), or another
turn of the session (another window's) runs first. Said once per silent stretch;
never while the terminal asks the user something."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

from bonsai.cli.render import TurnPrinter

SILENT_S = 10.0  # a first byte takes a second or two; ten is certainly a wait
TICK_S = 0.5


class SilenceWatch:
    """A thread that prints the line after ``after_s`` seconds without news (``heard``)."""

    def __init__(self, printer: TurnPrinter, after_s: float = SILENT_S) -> None:
        self.printer = printer
        self.after_s = after_s
        self._last = time.monotonic()
        self._told = False
        self._asking = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="bonsai-silence", daemon=True)

    def __enter__(self) -> SilenceWatch:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=2 * TICK_S)

    def heard(self) -> None:
        """Something arrived: the silence starts again."""
        self._last = time.monotonic()
        self._told = False

    def asking(self, handle: Callable[[str, dict[str, Any]], Any]) -> Callable[..., Any]:
        """``handle`` (the terminal's answers to the daemon) with the watch held while it
        runs: a question waits for the user, not the model."""

        def held(method: str, params: dict[str, Any]) -> Any:
            self._asking = True
            try:
                return handle(method, params)
            finally:
                self._asking = False
                self.heard()

        return held

    def _watch(self) -> None:
        while not self._stop.wait(TICK_S):
            quiet = time.monotonic() - self._last
            if self._told or self._asking or quiet < self.after_s:
                continue
            self._told = True
            self.printer.aside(
                f"  … no reply for {self.after_s:.0f} s yet: the provider is slow, or another "
                "turn of this session runs first (Ctrl-C cancels)"
            )
