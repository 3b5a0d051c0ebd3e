"""A daemon loads a heavy library when it first needs it: one that has served a client
and a session's plain requests, but embedded nothing and mapped no repository, holds no
embedding model and no tree-sitter grammar, and never httpx's command line (rich, click,
pygments), which bonsai does not run. Seen over the wire, in ``bonsai/daemon/status``."""

from __future__ import annotations

from pathlib import Path

from bonsai_testing import BONSAI, bonsai_env, close_client, rpc, start_client


async def test_a_fresh_daemon_has_not_loaded_what_it_has_not_needed(home: Path) -> None:
    env = bonsai_env(home, BONSAI_PROVIDER="sim", BONSAI_MODEL="gpt-4o-mini")
    client = await start_client([*BONSAI, "serve", "--stdio"], env)
    try:
        sid = (await rpc(client, "bonsai/session/create", {"workspace": str(home)}))["sessionId"]
        await rpc(
            client, "bonsai/session/append", {"sessionId": sid, "role": "user", "content": "hi"}
        )
        await rpc(client, "bonsai/session/list")
        status = await rpc(client, "bonsai/daemon/status")
    finally:
        await close_client(client)
    loaded = set(status["heavyModules"])
    assert "detect_secrets" in loaded, "it redacted its log and events: the field tells true"
    assert not loaded & {"rich", "click", "pygments"}, loaded
    assert "model2vec" not in loaded, loaded
    assert not [name for name in loaded if name.startswith("tree_sitter_")], loaded
