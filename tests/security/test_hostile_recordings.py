"""A hostile recording handed to ``bonsai/session/import`` hurts nothing.

The daemon reads the file itself: a FIFO (or a link to one) hung the import's
request for ever, ``/dev/zero`` or a huge file was read whole into the daemon's
memory, and JSON nested thousands of levels deep raised RecursionError, which
came back as an internal error. Each is now one clear error naming the file
(``services/importers/recording_file.py``, ``api.py``), nothing is stored, and
the daemon goes on serving.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from bonsai_testing import rpc

INVALID_PARAMS = -32602


async def _refused(client: LanguageClient, path: Path, fmt: str, workspace: Path) -> str:
    params = {"path": str(path), "format": fmt, "workspace": str(workspace)}
    with pytest.raises(JsonRpcException) as info:
        await rpc(client, "bonsai/session/import", params)  # rpc waits at most 30 s
    assert info.value.code == INVALID_PARAMS, info.value
    return str(info.value.message)


async def test_pipes_devices_and_huge_files_are_refused_before_reading(
    stdio_client: LanguageClient, tmp_path: Path
) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    linked = tmp_path / "zero.jsonl"
    linked.symlink_to("/dev/zero")
    huge = tmp_path / "huge.jsonl"
    with huge.open("wb") as handle:  # sparse: 300 MiB on paper, nothing on disk
        handle.truncate(300 * 1024 * 1024)

    message = await _refused(stdio_client, fifo, "claude-code", tmp_path)
    assert "session.jsonl" in message and "not a regular file" in message
    message = await _refused(stdio_client, linked, "auto", tmp_path)
    assert "not a regular file" in message
    message = await _refused(stdio_client, huge, "claude-code", tmp_path)
    assert "300 MiB" in message and "not imported" in message

    status = await rpc(stdio_client, "bonsai/daemon/status")
    assert status["sessions"] == 0 and status["clients"] == 1


async def test_json_nested_too_deeply_is_a_clear_error(
    stdio_client: LanguageClient, tmp_path: Path
) -> None:
    deep = tmp_path / "deep.jsonl"
    record = '{"type": "user", "message": ' + "[" * 200_000 + "]" * 200_000 + "}\n"
    deep.write_text(record * 2, encoding="utf-8")
    for fmt in ("auto", "claude-code", "codex", "openai"):
        message = await _refused(stdio_client, deep, fmt, tmp_path)
        assert "deep.jsonl" in message and "nested too deeply" in message, (fmt, message)
    assert (await rpc(stdio_client, "bonsai/daemon/status"))["sessions"] == 0


GITHUB_TOKEN = "ghp_" + "R3c0rd3dT0k3n" * 3
AWS_ID = "AKIA" + "RECORDED0KEY0ID7"  # AKIA and 16


async def test_secrets_in_an_imported_recording_are_not_stored(
    stdio_client: LanguageClient, tmp_path: Path, home: Path
) -> None:
    """A recording someone handed you holds their tool outputs, keys and all: the
    import stored them byte for byte, where every live path redacts before storing."""
    recording = tmp_path / "handed.json"
    recording.write_text(
        json.dumps(
            {
                "messages": [
                    {"role": "user", "content": "deploy it"},
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "c1",
                                "type": "function",
                                "function": {
                                    "name": "bash",
                                    "arguments": json.dumps({"command": f"gh auth {GITHUB_TOKEN}"}),
                                },
                            }
                        ],
                    },
                    {"role": "tool", "tool_call_id": "c1", "content": f"id {AWS_ID}\nok\n"},
                    {"role": "assistant", "content": f"Done with {GITHUB_TOKEN}."},
                ]
            }
        )
    )
    params = {"path": str(recording), "format": "openai", "workspace": str(tmp_path)}
    imported = await rpc(stdio_client, "bonsai/session/import", params)
    assert imported["messages"] == 4
    got = await rpc(stdio_client, "bonsai/ctx/get", {"sessionId": imported["sessionId"]})
    stored = b"".join(p.read_bytes() for p in sorted(home.glob("bonsai.db*")) if p.is_file())
    for secret in (GITHUB_TOKEN, AWS_ID):
        assert secret.encode() not in stored, f"{secret} stored"
        assert secret not in json.dumps(got), f"{secret} in the ledger"
    assert b"[REDACTED]" in stored, "the messages are there, redacted"
