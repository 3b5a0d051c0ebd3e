"""The tokenizer loads when a session first counts, not at the daemon's start.

A daemon that answers ``initialize`` and its status has loaded none (nor imported
tiktoken); one that creates a session and gets its ledger has, and the ledger's
counts are exactly those of a counter whose encoding was loaded up front.
Seen over JSON-RPC, in ``bonsai/daemon/status``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bonsai.daemon.state import Daemon
from bonsai.protocol import models as m
from bonsai.services.providers.registry import lookup_model
from bonsai.services.store.db import open_database
from bonsai.services.tokens import TiktokenEstimator, estimator_for
from bonsai.session import ctx_views
from bonsai_testing import BONSAI, bonsai_env, close_client, rpc, start_client

MODEL = "gpt-4o-mini"  # an exact tiktoken count (o200k_base)


async def _status(client: object) -> dict[str, object]:
    return await rpc(client, "bonsai/daemon/status")  # type: ignore[arg-type, no-any-return]


async def test_a_daemon_that_only_answers_its_status_loads_no_tokenizer(home: Path) -> None:
    env = bonsai_env(home, BONSAI_PROVIDER="sim", BONSAI_MODEL=MODEL)
    client = await start_client([*BONSAI, "serve", "--stdio"], env)
    try:
        await rpc(client, "bonsai/session/list")
        first = await _status(client)
        again = await _status(client)
    finally:
        await close_client(client)
    assert first["tokenizersLoaded"] == [] and again["tokenizersLoaded"] == []
    assert "tiktoken" not in first["heavyModules"], first["heavyModules"]
    assert "tokenizers" not in again["heavyModules"], again["heavyModules"]


async def test_the_first_ledger_loads_it_and_counts_as_an_eager_load_would(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = bonsai_env(home, BONSAI_PROVIDER="sim", BONSAI_MODEL=MODEL)
    client = await start_client([*BONSAI, "serve", "--stdio"], env)
    try:
        sid = (await rpc(client, "bonsai/session/create", {"workspace": str(workspace)}))[
            "sessionId"
        ]
        for role, text in (("user", "count these words, please"), ("assistant", "done: 5")):
            await rpc(
                client,
                "bonsai/session/append",
                {"sessionId": sid, "role": role, "content": text},
            )
        ledger = await rpc(client, "bonsai/ctx/get", {"sessionId": sid})
        status = await _status(client)
    finally:
        await close_client(client)
    assert status["tokenizersLoaded"] == ["tiktoken:o200k_base"]
    assert "tiktoken" in status["heavyModules"]

    # the same log, viewed in this process by a counter whose encoding is loaded now
    monkeypatch.setenv("BONSAI_PROVIDER", "sim")
    monkeypatch.setenv("BONSAI_MODEL", MODEL)
    db_path = home / "bonsai.db"
    daemon = Daemon(home, open_database(db_path), db_path)
    try:
        eager = estimator_for(
            lookup_model(MODEL, {}).info,
            cache_dir=home / "cache" / "tiktoken",
            tokenizer_path=None,
            model=MODEL,
        )
        assert isinstance(eager.estimator, TiktokenEstimator), "loaded up front"
        daemon.hub.counters[MODEL] = eager
        params = m.CtxGetParams(session_id=sid)
        expected = json.loads(ctx_views.answer(daemon, params).body)
    finally:
        daemon.views.close()
        daemon.db.close()
    rows = [(n["id"], n["tokens"], n["confidence"]) for n in ledger["nodes"]]
    assert rows == [(n["id"], n["tokens"], n["confidence"]) for n in expected["nodes"]]
    assert any(n["tokens"] > 0 and n["section"] == "messages" for n in ledger["nodes"])
    assert ledger["totals"]["used"] == expected["totals"]["used"] > 0
    assert ledger["totals"]["confidence"] == expected["totals"]["confidence"]
