"""A daemon that ends leaves a trace in its log, however it ends.

- a fatal error in the interpreter (a segfault in an extension, an abort, a fatal
  signal): ``faulthandler`` writes every thread's Python stack into ``daemon.log``;
- an exception nobody handled, in a loop callback or task, a thread or the main
  thread: logged with its traceback (the loop goes on serving);
- a signal that would end the process (``SIGTERM``, ``SIGINT``, ``SIGHUP``): named in the
  log, then the daemon stops as for ``bonsai/daemon/stop``;
- the exit itself: one line with why (the signal, the stop asked for, an error), how
  long it served and its peak RSS. A daemon whose log ends without that line was
  killed outright (``SIGKILL``: ``kill -9`` or the kernel's OOM killer).

``BONSAI_DEBUG_CRASH`` makes a daemon fail on purpose once it serves (tests):
``fault`` (a segfault), ``task`` (a task that raises), ``thread`` (a thread that raises).
"""

from __future__ import annotations

import asyncio
import atexit
import faulthandler
import logging
import os
import resource
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import IO, Any

log = logging.getLogger("bonsai.daemon.exit")
CRASH_ENV = "BONSAI_DEBUG_CRASH"
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class LastWords:
    """What the daemon says of its end; one per process."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.reason = "the stop was asked for (bonsai/daemon/stop, or the stdio client left)"
        self._fault: IO[str] | None = None
        self.said = False

    def install(self, log_path: Path, loop: asyncio.AbstractEventLoop) -> None:
        self._fault = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 (kept open to the end)
        faulthandler.enable(file=self._fault, all_threads=True)
        loop.set_exception_handler(_loop_exception)
        sys.excepthook = _uncaught
        threading.excepthook = _thread_uncaught
        atexit.register(self.say)

    def stop_on_signals(self, loop: asyncio.AbstractEventLoop, stop: Callable[[], None]) -> None:
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, self._signalled, sig, stop)

    def _signalled(self, sig: signal.Signals, stop: Callable[[], None]) -> None:
        self.reason = f"signal {sig.name}"
        log.warning("received %s: stopping", sig.name)
        stop()

    def failed(self, error: BaseException) -> None:
        self.reason = f"an error: {type(error).__name__}: {error}"

    def say(self) -> None:
        """The exit line (once)."""
        if self.said:
            return
        self.said = True
        served = time.monotonic() - self.started
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        log.info(
            "exiting (pid %s): %s; served %.0f s, peak RSS %.0f MB",
            os.getpid(),
            self.reason,
            served,
            peak_mb,
        )
        for handler in logging.getLogger().handlers:
            handler.flush()


def _loop_exception(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    error = context.get("exception")
    where = context.get("task") or context.get("future") or context.get("handle") or ""
    log.error(
        "unhandled in the event loop: %s %s",
        context.get("message", ""),
        where,
        exc_info=(type(error), error, error.__traceback__) if error is not None else None,
    )


def _uncaught(kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
    log.critical("uncaught exception: the daemon ends", exc_info=(kind, error, trace))
    WORDS.failed(error)
    sys.__excepthook__(kind, error, trace)


def _thread_uncaught(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit:
        return
    name = args.thread.name if args.thread is not None else "?"
    error = args.exc_value
    log.error(
        "uncaught exception in thread %s",
        name,
        exc_info=(args.exc_type, error, args.exc_traceback) if error is not None else None,
    )


WORDS = LastWords()


def crash_on_purpose(loop: asyncio.AbstractEventLoop) -> None:
    """``BONSAI_DEBUG_CRASH``: fail as asked, soon after serving began (tests)."""
    how = os.environ.get(CRASH_ENV, "")
    if how == "fault":
        loop.call_later(0.2, faulthandler._sigsegv)  # type: ignore[attr-defined]
    elif how == "task":
        loop.call_later(0.2, lambda: asyncio.ensure_future(_raise("a task failed on purpose")))
    elif how == "thread":

        def fail() -> None:
            raise RuntimeError("a thread failed on purpose")

        threading.Thread(target=fail, name="bonsai-crash-test", daemon=True).start()


async def _raise(message: str) -> None:
    raise RuntimeError(message)
