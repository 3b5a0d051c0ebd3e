"""A user's stub of a node shorter than its stub would make the context bigger: refused
with a clear message (-32602), the node kept as it is; a node longer than its stub is
stubbed as before. Over real JSON-RPC."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from bonsai_testing import rpc


async def _nodes(client: LanguageClient, sid: str) -> dict[str, dict[str, Any]]:
    shown = await rpc(client, "bonsai/ctx/get", {"sessionId": sid, "view": "ledger"})
    return {n["label"]: n for n in shown["nodes"] if n["section"] == "messages"}


async def test_stubbing_a_node_smaller_than_its_stub_is_refused_and_the_node_kept(
    stdio_client: LanguageClient, tmp_path: Path
) -> None:
    sid = (await rpc(stdio_client, "bonsai/session/create", {"workspace": str(tmp_path)}))[
        "sessionId"
    ]
    long = "the whole design, told at length. " * 40
    for role, content in (("user", "ok"), ("assistant", long)):
        await rpc(
            stdio_client,
            "bonsai/session/append",
            {"sessionId": sid, "role": role, "content": content},
        )
    nodes = await _nodes(stdio_client, sid)
    tiny = next(n for label, n in nodes.items() if "ok" in label)
    big = next(n for label, n in nodes.items() if "design" in label)
    with pytest.raises(JsonRpcException) as refused:
        await rpc(stdio_client, "bonsai/ctx/stub", {"sessionId": sid, "nodeId": tiny["id"]})
    assert refused.value.code == -32602
    assert refused.value.message.startswith(
        f"node {tiny['id']} is 2 characters; its stub would be "
    )
    assert refused.value.message.endswith(
        "it would make the context bigger, so it is kept as it is"
    )
    after = await _nodes(stdio_client, sid)
    kept = next(n for n in after.values() if n["id"] == tiny["id"])
    assert (kept["state"], kept["tokens"]) == (tiny["state"], tiny["tokens"]), "nothing changed"
    stubbed = await rpc(stdio_client, "bonsai/ctx/stub", {"sessionId": sid, "nodeId": big["id"]})
    assert stubbed["node"]["state"] == "stubbed"
    assert stubbed["node"]["tokens"] < big["tokens"], "a stub that saves is still taken"
