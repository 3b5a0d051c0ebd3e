"""The daemon's heap policy is in force once it has started and warmed.

A real daemon (``bonsai serve --stdio``) with its stall monitor on
(``BONSAI_STALLS``) reports, when it stops, the collector as it left it: the
thresholds of the policy (``daemon.heap``) and the objects frozen once the start-up
and the tokenizer's warm-up were done; and, asked for Python's defaults, those.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from bonsai.daemon import heap
from bonsai_testing import BONSAI, bonsai_env, close_client, rpc, start_client


async def _report(home: Path, **env: str) -> dict[str, Any]:
    path = home / "stalls.json"
    client = await start_client(
        [*BONSAI, "serve", "--stdio"], bonsai_env(home, BONSAI_STALLS=str(path), **env)
    )
    try:
        sid = (await rpc(client, "bonsai/session/create", {"workspace": str(home)}))["sessionId"]
        await rpc(
            client, "bonsai/session/append", {"sessionId": sid, "role": "user", "content": "hi"}
        )
        await rpc(client, "bonsai/ctx/get", {"sessionId": sid})
        await rpc(client, "bonsai/daemon/stop")
        for _ in range(300):  # written at the end of the stop
            if path.exists():
                break
            await asyncio.sleep(0.1)
    finally:
        await close_client(client)
    return json.loads(path.read_text())  # type: ignore[no-any-return]


async def test_the_policy_is_applied_at_the_start_and_the_warm_heap_frozen(home: Path) -> None:
    report = await _report(home)
    assert report["gc"]["threshold"] == list(heap.THRESHOLD)
    assert report["gc"]["frozen"] > 10_000, "the imports and the warm tokenizer are frozen"
    assert report["ticks"] > 0, "the stall monitor ran"


async def test_pythons_defaults_when_asked(home: Path) -> None:
    report = await _report(home, BONSAI_GC_POLICY="python")
    assert report["gc"]["threshold"] == [700, 10, 10]
    assert report["gc"]["frozen"] == 0


@pytest.mark.parametrize(
    ("name", "freeze", "threshold"),
    [
        ("python", False, None),
        ("freeze", True, None),
        ("threshold", False, heap.THRESHOLD),
        ("FREEZE+threshold", True, heap.THRESHOLD),
        ("threshold=2000", False, (2000, *heap.THRESHOLD[1:])),
        ("nonsense", True, heap.THRESHOLD),  # the default, with a warning in the log
    ],
)
def test_policy_names(name: str, freeze: bool, threshold: Any) -> None:
    assert heap.Policy.named(name) == heap.Policy(freeze, threshold)
