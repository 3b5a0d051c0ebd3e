"""Where a read-only request's time goes, stamped end to end (``BONSAI_CTX_TRACE=1``).

With the variable set, the daemon stamps each traced request (``bonsai/ctx/get``
unless ``BONSAI_CTX_TRACE_METHODS`` names others, comma-separated) at every step it
takes: its frame read, its handler's start, the kept-answer check, the view process
asked and what it stamped (its read of the request, its computation's start and
end), the answer back on the loop and the response framed. The stamps are wall-clock
(``time.time()``, comparable across the processes of one machine) and go out in
the response's envelope as ``"trace": [[name, t], ...]`` beside ``"result"`` (which
is unchanged), for a client that measures (``bench/load.py --polling --trace``) to
add its own: sent, first byte read, body read.

Off (the default) nothing is recorded and the envelope is the usual one: a mark is
one context-variable lookup.
"""

from __future__ import annotations

import json
import os
import time
from contextvars import ContextVar, Token
from dataclasses import dataclass, field

ENV = "BONSAI_CTX_TRACE"
METHODS_ENV = "BONSAI_CTX_TRACE_METHODS"
DEFAULT_METHODS = frozenset({"bonsai/ctx/get"})


@dataclass
class Trace:
    """The stamps of one request, in the order they were made."""

    marks: list[tuple[str, float]] = field(default_factory=list)

    def mark(self, name: str, at: float | None = None) -> None:
        self.marks.append((name, time.time() if at is None else at))

    def json(self) -> bytes:
        return json.dumps([[n, round(t, 6)] for n, t in self.marks]).encode("ascii")


_CURRENT: ContextVar[Trace | None] = ContextVar("bonsai_request_trace", default=None)


def methods() -> frozenset[str]:
    """The methods traced, from the environment; empty when tracing is off."""
    if os.environ.get(ENV, "") not in ("1", "true", "yes"):
        return frozenset()
    named = os.environ.get(METHODS_ENV, "")
    return frozenset(m.strip() for m in named.split(",") if m.strip()) or DEFAULT_METHODS


def begin(first: str = "read") -> Token[Trace | None]:
    """Start a trace for the request about to be dispatched (its tasks inherit it)."""
    trace = Trace()
    trace.mark(first)
    return _CURRENT.set(trace)


def end(token: Token[Trace | None]) -> None:
    _CURRENT.reset(token)


def current() -> Trace | None:
    return _CURRENT.get()


def mark(name: str, at: float | None = None) -> None:
    """Stamp the current request's trace, if it has one."""
    trace = _CURRENT.get()
    if trace is not None:
        trace.mark(name, at)
