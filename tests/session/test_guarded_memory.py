"""The memory service the loop and the view worker share: one caller at a time."""

from __future__ import annotations

import inspect
import threading
from pathlib import Path

from bonsai.services.memory.service import MemoryService
from bonsai.services.memory.write_tool import MemoryWriteArgs
from bonsai.session.memory import GuardedMemory
from bonsai.settings import MemorySettings


def test_a_read_waits_while_another_caller_holds_the_service(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    service = GuardedMemory(home, workspace, MemorySettings(), env={})
    service.write(MemoryWriteArgs(name="uses-pnpm", fact="This repo uses pnpm.", tier="user"))
    found: list[list[str]] = []

    def search() -> None:
        found.append([hit.name for hit in service.search("pnpm").results])

    with service.lock:  # as a turn's recall holds it on the loop
        reader = threading.Thread(target=search)
        reader.start()
        reader.join(0.3)
        assert found == [], "the search waited for the service"
    reader.join(30)
    assert found == [["uses-pnpm"]]
    service.close()


def test_every_public_method_of_the_service_is_guarded() -> None:
    public = [
        name
        for name, method in vars(MemoryService).items()
        if inspect.isfunction(method) and not name.startswith("_")
    ]
    assert {"search", "recall_for_turn", "sync", "write", "list", "get", "status"} <= set(public)
    unguarded = [
        name for name in public if getattr(GuardedMemory, name) is getattr(MemoryService, name)
    ]
    assert unguarded == []
