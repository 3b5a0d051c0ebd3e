"""The two-topic session the episode end-to-end tests share: a "Parser" topic
that reads three files (one of them holds a unique word) and a "CLI" topic
that reads two, so the first topic's episode is archived under pressure."""

from __future__ import annotations

from pathlib import Path

from bonsai.sim.script import Reply
from episodes.rig import call

UNIQUE = "quokkaparserfinding"
FILLER = " ".join(["the quick brown fox jumps over the lazy dog and then"] * 4)


def lines(tag: str, count: int, unique_at: int = -1) -> str:
    rows = [f"{tag}l{i} {FILLER}" + (f" {UNIQUE}" if i == unique_at else "") for i in range(count)]
    return "\n".join(rows) + "\n"


def make_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    for n in range(3):
        (ws / f"parser{n}.txt").write_text(lines(f"p{n}", 60, unique_at=30 if n == 1 else -1))
    for n in range(2):
        (ws / f"cli{n}.txt").write_text(lines(f"c{n}", 50))
    return ws


def title(name: str) -> Reply:
    return Reply(tool_calls=[call("set_session_title", title=name, episode_action="new_topic")])


def reads(*paths: str) -> list[Reply]:
    return [Reply(tool_calls=[call("read_file", path=p)]) for p in paths]
