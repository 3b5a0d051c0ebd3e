"""A hostile recording handed to ``bonsai/session/import`` hurts nothing.

The daemon reads the file itself: a FIFO (or a link to one) hung the import's
request for ever, ``/dev/zero`` or a huge file was read whole into the daemon's
memory, and JSON nested thousands of levels deep raised RecursionError, which
came back as an internal error. Each is now one clear error naming the file
(``services/importers/recording_file.py``, ``api.py``), nothing is stored, and
the daemon goes on serving.
"""

from __future__ import annotations

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
