"""The system parts a view keeps: never longer than a kept view, never for a turn.

A polled view of a session that moves reuses the parts before the volatile tail
(the workspace's listing, steering files, indexes) for ``FRESH_S``; a steering file
edited shows in the first view after that, and whatever shapes the parts (another
repository map, another cap) is gathered again at once.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

from pytest_lsp import LanguageClient

from bonsai.agent.parts_cache import StablePartsCache
from bonsai.domain import Evidence
from bonsai.services.project_context import stable_parts
from bonsai.services.project_context.volatile import volatile_part
from bonsai.session.hub import SessionHub
from bonsai.session.views import FRESH_S
from bonsai.settings import ContextSettings
from bonsai_testing import rpc


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _texts(parts: list) -> str:  # type: ignore[type-arg]
    return "\n".join(p.text for p in parts)


def test_kept_parts_are_read_again_after_fresh_s_and_when_their_arguments_change(
    tmp_path: Path,
) -> None:
    (tmp_path / "AGENTS.md").write_text("Use tabs.\n")
    clock = Clock()
    cache = StablePartsCache(fresh_s=1.0, clock=clock)
    settings = ContextSettings()
    args = {"settings": settings, "repomap_text": None, "persona": "P"}
    first = cache.parts(tmp_path, **args)  # type: ignore[arg-type]
    assert "Use tabs." in _texts(first)
    assert first == stable_parts(tmp_path, **args)  # type: ignore[arg-type]

    (tmp_path / "AGENTS.md").write_text("Use spaces.\n")
    clock.now += 0.5
    assert _texts(cache.parts(tmp_path, **args)) == _texts(first)  # type: ignore[arg-type]
    assert cache.gathered == 1
    # another repository map is another key: gathered at once, with the new file
    mapped = cache.parts(tmp_path, **{**args, "repomap_text": "a.py"})  # type: ignore[arg-type]
    assert "Use spaces." in _texts(mapped) and "a.py" in _texts(mapped)
    clock.now += 0.6  # past fresh_s: the disk is read again
    again = cache.parts(tmp_path, **args)  # type: ignore[arg-type]
    assert "Use spaces." in _texts(again) and "Use tabs." not in _texts(again)
    assert cache.gathered == 3
    # the list handed back is the caller's own: appending to it changes nothing kept
    again.append(again[0])
    assert len(cache.parts(tmp_path, **args)) == len(again) - 1  # type: ignore[arg-type]


def test_the_loops_hub_keeps_no_parts_so_a_turn_reads_the_disk() -> None:
    assert SessionHub().stable_parts is None


async def test_a_steering_file_edited_between_two_moved_views_shows_in_the_second(
    stdio_client: LanguageClient, tmp_path: Path
) -> None:
    client = stdio_client
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text("Always run the frobnicator first.\n")
    sid = (await rpc(client, "bonsai/session/create", {"workspace": str(workspace)}))["sessionId"]
    append = {"sessionId": sid, "role": "user", "content": "hello"}
    await rpc(client, "bonsai/session/append", append)
    get = {"sessionId": sid, "view": "wire"}
    first = json.dumps(await rpc(client, "bonsai/ctx/get", get))
    assert "Always run the frobnicator first." in first

    (workspace / "AGENTS.md").write_text("Never run the frobnicator.\n")
    await asyncio.sleep(FRESH_S + 0.2)
    await rpc(client, "bonsai/session/append", {**append, "content": "again"})
    second = json.dumps(await rpc(client, "bonsai/ctx/get", get))
    assert "Never run the frobnicator." in second
    assert "Always run the frobnicator first." not in second
    assert "again" in second, "the moved log, with the new file"


def _git(workspace: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args],
        cwd=workspace,
        check=True,
        capture_output=True,
    )


def test_the_volatile_tail_is_kept_for_fresh_s_and_made_again_when_its_inputs_change(
    tmp_path: Path,
) -> None:
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.py").write_text("one\n")
    _git(tmp_path, "add", "a.py")
    _git(tmp_path, "commit", "-qm", "init")
    clock = Clock()
    cache = StablePartsCache(fresh_s=1.0, clock=clock)
    first = cache.volatile(tmp_path, None, [], ["client 1 (vscode)"])
    assert first == volatile_part(tmp_path, None, [], ["client 1 (vscode)"])
    assert "a.py" not in first.text

    (tmp_path / "a.py").write_text("two\n")  # a change on disk: shown after fresh_s
    clock.now += 0.5
    assert cache.volatile(tmp_path, None, [], ["client 1 (vscode)"]).text == first.text
    assert cache.tails == 1
    # another peer, another read: made again at once, with what the disk holds now
    peers = cache.volatile(tmp_path, None, [], ["client 1 (vscode)", "client 2 (nvim)"])
    assert "client 2 (nvim)" in peers.text and "a.py" in peers.text
    read = Evidence(kind="read", path="a.py", content_hash="0" * 64)
    stale = cache.volatile(tmp_path, None, [read], ["client 1 (vscode)"])
    assert "Stale reads:\n" not in first.text and "- a.py" in stale.text.split("Stale")[1]
    clock.now += 0.6  # past fresh_s: git is asked again
    again = cache.volatile(tmp_path, None, [], ["client 1 (vscode)"])
    assert "a.py" in again.text and again.text != first.text
    assert cache.tails == 4
