"""bonsai/memory/* through the daemon, on real files in both tiers."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from bonsai_testing import rpc


async def test_remember_list_search_forget(
    stdio_client: LanguageClient, home: Path, tmp_path: Path
) -> None:
    ws = tmp_path / "proj"
    ws.mkdir()
    scope = {"workspace": str(ws)}
    added = await rpc(
        stdio_client,
        "bonsai/memory/add",
        {**scope, "fact": "Always use pnpm, never npm, in this repository.", "tier": "project"},
    )
    entry = added["entry"]
    assert entry["tier"] == "project"
    assert Path(entry["path"]).parent == ws / ".bonsai" / "memory"
    await rpc(
        stdio_client,
        "bonsai/memory/add",
        {**scope, "fact": "The user prefers short answers with code first.", "tier": "user"},
    )
    assert (home / "memory").is_dir()

    listed = await rpc(stdio_client, "bonsai/memory/list", scope)
    assert {e["tier"] for e in listed["entries"]} == {"user", "project"}
    assert listed["embeddings"].startswith("off"), "no model shipped: BM25-only, said visibly"

    found = await rpc(
        stdio_client, "bonsai/memory/search", {**scope, "query": "which package manager pnpm"}
    )
    assert found["results"][0]["name"] == entry["name"]
    assert found["results"][0]["lanes"]["bm25"] > 0

    got = await rpc(stdio_client, "bonsai/memory/get", {**scope, "name": entry["name"]})
    assert "pnpm" in got["body"]
    await rpc(
        stdio_client, "bonsai/memory/setEnabled", {**scope, "name": entry["name"], "enabled": False}
    )
    listed = await rpc(stdio_client, "bonsai/memory/list", scope)
    assert [e["enabled"] for e in listed["entries"] if e["name"] == entry["name"]] == [False]

    await rpc(stdio_client, "bonsai/memory/forget", {**scope, "name": entry["name"]})
    assert not Path(entry["path"]).exists()
    with pytest.raises(JsonRpcException) as info:
        await rpc(stdio_client, "bonsai/memory/get", {**scope, "name": entry["name"]})
    assert "no memory entry" in info.value.message


async def test_near_duplicate_and_corrupt_files_are_reported(
    stdio_client: LanguageClient, tmp_path: Path
) -> None:
    ws = tmp_path / "proj"
    store = ws / ".bonsai" / "memory"
    store.mkdir(parents=True)
    broken = store / "broken-entry.md"
    broken.write_bytes(b"---\nname: [unclosed\n---\nbody\n")
    scope = {"workspace": str(ws)}
    fact = "Run the integration tests with make itest before merging."
    await rpc(stdio_client, "bonsai/memory/add", {**scope, "fact": fact, "tier": "project"})
    with pytest.raises(JsonRpcException) as info:
        await rpc(
            stdio_client,
            "bonsai/memory/add",
            {**scope, "fact": fact + " Always.", "tier": "project"},
        )
    assert "similar" in info.value.message
    listed = await rpc(stdio_client, "bonsai/memory/list", scope)
    assert any("broken-entry.md" in issue for issue in listed["issues"])
    assert broken.read_bytes() == b"---\nname: [unclosed\n---\nbody\n", "never rewritten"
