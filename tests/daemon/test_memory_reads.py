"""bonsai/memory/list, get and search off the loop: beside turns that recall, never writing.

The reads run on the view worker while turns recall memory on the loop, through the
same service (one index connection, held by one caller at a time). Searches fired
while turns start give the same answers as alone, and every turn still gets its note.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from bonsai.services.memory.inject import FRAME_OPEN
from bonsai.sim import Script
from bonsai.sim.runner import run_simulator
from bonsai.sim.script import Reply
from bonsai_testing import BONSAI, bonsai_env, close_client, events_of, rpc, sim_env, start_client

ENTRY = (
    "---\nname: deploy-checklist\ndescription: How this project deploys to staging\n"
    "type: project\ncreated: 2026-11-01\nupdated: 2026-11-01\n---\n"
    "Deploys to staging go through `make deploy-staging` after the smoke tests pass.\n"
)
USER_ENTRY = (
    "---\nname: short-answers\ndescription: The user prefers short answers\n"
    "type: user\ncreated: 2026-11-01\nupdated: 2026-11-01\n---\nCode first, prose after.\n"
)


def _files(*folders: Path) -> dict[Path, tuple[bytes, int]]:
    return {
        path: (path.read_bytes(), path.stat().st_mtime_ns)
        for folder in folders
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


async def test_searches_beside_recalling_turns_answer_as_alone_and_every_turn_recalls(
    home: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "project"
    memory = workspace / ".bonsai" / "memory"
    memory.mkdir(parents=True)
    (memory / "deploy-checklist.md").write_text(ENTRY)
    turns = 4
    script = Script(steps=[Reply(text="noted " * 40)] * turns, latency_ms=2)
    async with run_simulator(script) as sim:
        env = sim_env(home, sim.openai_base_url)
        chat, reader = await asyncio.gather(
            start_client([*BONSAI, "connect"], env), start_client([*BONSAI, "connect"], env)
        )
        try:
            scope = {"workspace": str(workspace)}
            query = {**scope, "query": "how do we deploy to staging"}
            alone = await rpc(reader, "bonsai/memory/search", query)
            assert [hit["name"] for hit in alone["results"]] == ["deploy-checklist"]

            sids = []
            for _ in range(turns):
                sid = (await rpc(chat, "bonsai/session/create", scope))["sessionId"]
                await rpc(chat, "bonsai/session/attach", {"sessionId": sid})
                sids.append(sid)
            events = events_of(chat)
            text = "how do we deploy to staging after the smoke tests?"

            async def send(sid: str) -> str:
                return str(
                    (await rpc(chat, "bonsai/chat/send", {"sessionId": sid, "text": text}))[
                        "turnId"
                    ]
                )

            async def read_while_turns_start() -> list[dict]:
                answers = []
                for _ in range(3 * turns):
                    answers.append(await rpc(reader, "bonsai/memory/search", query))
                    answers.append(await rpc(reader, "bonsai/memory/list", scope))
                return answers

            results = await asyncio.gather(*(send(s) for s in sids), read_while_turns_start())
            turn_ids, answers = results[:turns], results[turns]
            for turn_id in turn_ids:
                await events.wait_for(
                    "bonsai/chat/event",
                    lambda p, t=turn_id: p["turnId"] == t and p["kind"] in ("done", "error"),
                    90,
                )
            requests = list(sim.requests)
        finally:
            await close_client(chat)
            await close_client(reader)
    done = [e for e in events.of("bonsai/chat/event") if e["kind"] in ("done", "error")]
    assert {e["kind"] for e in done} == {"done"}, done
    searches = [a for a in answers if "results" in a]
    assert all(s["results"] == alone["results"] for s in searches), "the same answer as alone"
    listed = [a for a in answers if "entries" in a]
    assert all([e["name"] for e in a["entries"]] == ["deploy-checklist"] for a in listed)
    notes = [
        m
        for request in requests
        for m in request.body["messages"]
        if m["role"] == "user" and FRAME_OPEN in str(m["content"])
    ]
    assert len(requests) == turns and len(notes) == turns, "every turn recalled the entry"
    assert all("make deploy-staging" in str(note["content"]) for note in notes)


async def test_memory_reads_never_write_the_stores(home: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "project"
    project = workspace / ".bonsai" / "memory"
    project.mkdir(parents=True)
    (project / "deploy-checklist.md").write_text(ENTRY)
    (project / "broken.md").write_bytes(b"---\nname: [unclosed\n---\nbody\n")
    user = home / "memory"
    user.mkdir()
    (user / "short-answers.md").write_text(USER_ENTRY)
    before = _files(project, user)
    client = await start_client([*BONSAI, "serve", "--stdio"], bonsai_env(home))
    try:
        scope = {"workspace": str(workspace)}
        for _ in range(2):
            listed = await rpc(client, "bonsai/memory/list", scope)
            got = await rpc(client, "bonsai/memory/get", {**scope, "name": "deploy-checklist"})
            found = await rpc(client, "bonsai/memory/search", {**scope, "query": "short answers"})
    finally:
        await close_client(client)
    assert {e["name"] for e in listed["entries"]} == {"deploy-checklist", "short-answers"}
    assert any("broken.md" in issue for issue in listed["issues"])
    assert "make deploy-staging" in got["body"]
    assert found["results"][0]["name"] == "short-answers"
    assert _files(project, user) == before, "every entry as it was: bytes and times"
