"""Episodes end to end: agent loop → pipeline → simulator, over real JSON-RPC."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from bonsai.sim import Script
from bonsai.sim.script import Reply, Rule
from episodes.rig import Rig, call, make_rig, small_window, write_config
from episodes.two_topics import UNIQUE, make_workspace, reads, title

CARD = '[Episode archived] #1 "Parser"'


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path)


SCRIPT = Script(
    steps=[
        title("Parser"),
        *reads("parser0.txt", "parser1.txt", "parser2.txt"),
        Reply(text="The parser is fixed."),
        title("CLI"),
        *reads("cli0.txt", "cli1.txt"),
        Reply(tool_calls=[call("recall", episode=1)]),
        Reply(tool_calls=[call("recall", episode=1, cursor=4)]),
        Reply(tool_calls=[call("recall", query=UNIQUE)]),
        Reply(text="Recalled what I needed."),
    ],
    rules=[Rule(match="after restart", reply=Reply(text="Still here."))],
)


def episodes_of(result: dict[str, Any]) -> list[tuple[int, str]]:
    return [(e["number"], e["state"]) for e in result["episodes"]]


def tool_text(rig: Rig, index: int) -> str:
    """The newest tool result in request ``index``."""
    return str(next(m for m in reversed(rig.sent(index)) if m["role"] == "tool")["content"])


async def test_archive_recall_restore_through_the_agent_loop(home: Path, workspace: Path) -> None:
    write_config(home, small_window(24_000))
    async with make_rig(SCRIPT, home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, "Please fix the parser.")
        assert CARD not in rig.sent_text(), "no pressure yet, the open episode stays"
        await rig.turn(sid, "Now add a CLI flag.")
        first_archived = next(i for i, r in enumerate(rig.sim.requests) if CARD in str(r.body))
        sent = rig.sent_text(first_archived)
        assert "p0l5 " not in sent and "c0l5 " in sent
        listed = await rig.call("bonsai/episodes/list", sessionId=sid)
        assert episodes_of(listed) == [(1, "archived"), (2, "open")]
        assert listed["episodes"][0]["tokensAfter"] < listed["episodes"][0]["tokensBefore"] / 10

        # recall by episode, then by query: originals, inside the untrusted-data frame
        page = tool_text(rig, -3)
        assert page.startswith('<untrusted-data source="recall">') and "Episode #1" in page
        assert "Please fix the parser." in page and '"cursor": 4' in page
        page = tool_text(rig, -2)
        assert page.startswith('<untrusted-data source="recall">') and "p0l5 " in page
        hits = tool_text(rig, -1)
        assert hits.startswith('<untrusted-data source="recall">') and "episode 1, score" in hits
        # the hit (a ~3,100-token read) is served as one pointer line naming where the word is
        assert "[tool result of read_file: 60 lines, about" in hits and "on line 31;" in hits
        assert "\nPlease fix the parser.\n[answer:]" in hits, "with the question it answered"

        # the ledger: the card node and the archived messages
        ledger = await rig.call("bonsai/ctx/get", sessionId=sid, view="ledger")
        [card] = [n for n in ledger["nodes"] if n["kind"] == "episode"]
        assert (card["section"], card["state"]) == ("episodes", "archived")
        assert sum(1 for n in ledger["nodes"] if n["state"] == "archived") > 8
        # each says, in words a user acts on (no protocol method), how to bring it back
        archived = [n for n in ledger["nodes"] if n["state"] == "archived"]
        assert not any("bonsai/" in n["reason"] for n in archived), archived[:2]
        assert all(
            "restorable from the episodes list" in n["reason"]
            for n in archived
            if n["kind"] != "episode"
        )
        assert ledger["totals"]["used"] == sum(
            n["tokens"] for n in ledger["nodes"] if n["state"] != "dropped"
        )

        # byte-stable across a restart: the card is re-asserted, not rebuilt
        card_text = next(m["content"] for m in rig.sent() if CARD in str(m["content"]))
        await rig.restart()
        await rig.turn(sid, "after restart")
        assert card_text in [m["content"] for m in rig.sent()]

        # restore re-splices the originals; restored episodes are never archived again
        await rig.call("bonsai/episodes/restore", sessionId=sid, number=1)
        listed = await rig.call("bonsai/episodes/list", sessionId=sid)
        assert episodes_of(listed)[0] == (1, "restored") and not listed["episodes"][0]["archivable"]
        await rig.turn(sid, "after restart, again")
        assert CARD not in rig.sent_text()
        with pytest.raises(JsonRpcException, match="restored"):
            await rig.call("bonsai/episodes/restore", sessionId=sid, number=1)
        turns = await rig.call("bonsai/ctx/get", sessionId=sid, view="turns")
        kinds = [e["kind"] for t in turns["turns"] for e in t["events"]]
        assert "archive" in kinds and "restore" in kinds


async def test_episodes_off_means_no_recall_tool_and_nothing_persisted(
    home: Path, workspace: Path
) -> None:
    write_config(home, small_window(24_000))
    script = Script(steps=[Reply(text="on"), Reply(text="off")])
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, "hello")
        tools_on = rig.sim.requests[-1].body["tools"]
        rig.env["BONSAI_EPISODES"] = "0"
        await rig.restart()
        await rig.turn(sid, "hello again")
        tools_off = rig.sim.requests[-1].body["tools"]
        without_recall = [t for t in tools_on if t["function"]["name"] != "recall"]
        assert len(without_recall) == len(tools_on) - 1
        assert json.dumps(tools_off) == json.dumps(without_recall), "byte-identical"
        with pytest.raises(JsonRpcException, match="turned off"):
            await rig.call("bonsai/episodes/list", sessionId=sid)
    rows = sqlite3.connect(home / "bonsai.db").execute(
        "SELECT key, value FROM session_state WHERE key = 'context'"
    )
    [(_, value)] = list(rows)
    assert "episodes" not in json.loads(value)


async def test_resume_repairs_an_inconsistent_archive_and_says_so(
    home: Path, workspace: Path
) -> None:
    write_config(home, small_window(24_000))
    async with make_rig(SCRIPT, home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, "Please fix the parser.")
        await rig.turn(sid, "Now add a CLI flag.")
        assert CARD in rig.sent_text()
        await rig.stop()
        db = sqlite3.connect(home / "bonsai.db")
        [(raw,)] = db.execute("SELECT value FROM session_state WHERE key = 'context'")
        state = json.loads(raw)
        [entry] = state["episodes"]["archives"].values()
        entry["ids"] = entry["ids"][:-1]  # no longer the episode's span
        db.execute("UPDATE session_state SET value = ? WHERE key = 'context'", (json.dumps(state),))
        db.commit()
        db.close()
        await rig.start(attach=True)
        await rig.turn(sid, "after restart")
        sent = rig.sent_text()
        assert CARD not in sent and "Please fix the parser." in sent, "originals are back"
        listed = await rig.call("bonsai/episodes/list", sessionId=sid)
        assert episodes_of(listed)[0] == (1, "closed") and not listed["episodes"][0]["archivable"]
        turns = await rig.call("bonsai/ctx/get", sessionId=sid, view="turns")
        [repair] = [e for t in turns["turns"] for e in t["events"] if e["kind"] == "episode-repair"]
        assert "no longer match" in repair["detail"]
    assert "no longer match the episode's span" in (home / "logs" / "daemon.log").read_text()
