"""The simulator's mutable state: the script in force, prefix caches and the
log of requests received. Lives on the server's event loop only."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from bonsai.sim.cache import AutomaticCache, BreakpointCache
from bonsai.sim.openai_wire import is_deepseek
from bonsai.sim.script import Script, ScriptRunner

_SECRET_HEADERS = ("authorization", "x-api-key", "api-key")


class RecordedRequest(BaseModel):
    """One request as received. Credential headers are kept only as lengths."""

    n: int
    method: str
    path: str
    headers: dict[str, str]
    body: Any = None
    route: str = "other"  # openai | anthropic | count_tokens | control | other
    status: int = 0
    outcome: str = "pending"  # ok | fault:<kind> | client_closed | error
    source: str | None = None  # which script entry answered
    usage: dict[str, int] | None = None
    connection: int = 0  # which accepted connection carried it (1-based; 0: not known)
    body_sha256: str | None = None  # of the body's bytes as received (tests compare encodings)


def redact_headers(headers: dict[str, str]) -> dict[str, str]:
    return {
        k: (f"<redacted {len(v)} chars>" if k in _SECRET_HEADERS else v) for k, v in headers.items()
    }


@dataclass
class SimState:
    script: Script
    runner: ScriptRunner = field(init=False)
    openai_caches: dict[str, AutomaticCache] = field(default_factory=dict)
    anthropic_caches: dict[str, BreakpointCache] = field(default_factory=dict)
    requests: list[RecordedRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.runner = ScriptRunner(self.script)

    def set_script(self, script: Script) -> None:
        """Replace the script; the request log and caches stay."""
        self.script = script
        self.runner = ScriptRunner(script)

    def reset(self) -> None:
        """Forget requests and caches and restart the current script."""
        self.set_script(self.script)
        self.openai_caches.clear()
        self.anthropic_caches.clear()
        self.requests.clear()

    def openai_cache(self, model: str) -> AutomaticCache:
        return self.openai_caches.setdefault(model, AutomaticCache(deepseek=is_deepseek(model)))

    def anthropic_cache(self, model: str) -> BreakpointCache:
        return self.anthropic_caches.setdefault(model, BreakpointCache())

    def record(
        self, method: str, path: str, headers: dict[str, str], connection: int = 0
    ) -> RecordedRequest:
        entry = RecordedRequest(
            n=len(self.requests) + 1,
            method=method,
            path=path,
            headers=redact_headers(headers),
            connection=connection,
        )
        self.requests.append(entry)
        return entry
