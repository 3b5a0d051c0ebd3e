"""The attachment rule through a real daemon: suggest, topic (replayed after a
restart), move there, and bonsai/tree/changed on a second client."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from bonsai.sim import Script
from bonsai.sim.runner import run_simulator
from bonsai.sim.script import Reply
from bonsai_testing import BONSAI, close_client, events_of, rpc, sim_env, start_client
from episodes.rig import Rig, make_rig, write_config

EXCHANGES = [
    ("Set up the project with a pyproject file.", "Done: pyproject configured for the project."),
    (
        "Parse the DICOM headers and expose PixelRepresentation.",
        "parse_header now reads PixelRepresentation from the DICOM header.",
    ),
    ("Add a CLI command that prints the version.", "Added a version subcommand to the CLI."),
    ("Document the project in the README.", "The README now documents the project."),
]
SPECIFIC = "Why is PixelRepresentation signed?"
GENERIC = "What should we do next with the project?"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def script() -> Script:
    replies = [Reply(text=answer) for _, answer in EXCHANGES]
    return Script(
        steps=[*replies, Reply(text="It is signed when the tag says 1."), Reply(text="ok")]
    )


async def converse(rig: Rig) -> str:
    sid = await rig.session()
    for question, _ in EXCHANGES:
        await rig.turn(sid, question)
    return sid


def by_label(tree: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n["label"]: n for n in tree["nodes"]}


def config(home: Path, attach: str) -> None:
    write_config(home, {"repomap": {"enabled": False}, "tree": {"attach": attach}})


async def test_suggest_reports_the_decision_and_leaves_the_tree_as_it_is(
    home: Path, workspace: Path
) -> None:
    config(home, "suggest")
    async with make_rig(script(), home, workspace) as rig:
        sid = await converse(rig)
        await rig.turn(sid, SPECIFIC)
        await rig.turn(sid, GENERIC)
        tree = await rig.call("bonsai/tree/get", sessionId=sid)
        nodes = by_label(tree)
        introducer = nodes[EXCHANGES[1][1]]["nodeId"]
        specific, generic = nodes[SPECIFIC], nodes[GENERIC]
        assert tree["attachMode"] == "suggest"
        assert specific["attach"]["target"] == introducer
        assert specific["attach"]["term"] == "pixelrepresentation"
        assert specific["attach"]["score"] > 0 and specific["attach"]["placed"] is False
        assert specific["attach"]["similarity"] in ("lexical", "model2vec")
        assert (
            "target" not in generic["attach"]
            and "only generic words" in generic["attach"]["reason"]
        )
        assert tree["activePath"] == [n["nodeId"] for n in tree["nodes"]], "nothing moved"
        assert EXCHANGES[2][1] in rig.sent_text(-2), "the model saw the whole line"

        # move there: one request, recorded as a tree op
        moved = await rig.call(
            "bonsai/tree/attach", sessionId=sid, nodeId=specific["nodeId"], parentId=introducer
        )
        assert by_label(moved)[SPECIFIC]["parentId"] == introducer
        assert by_label(moved)[SPECIFIC]["attach"]["placed"] is True
        changed = await events_of(rig.c).wait_for("bonsai/tree/changed")
        assert changed == {"sessionId": sid, "op": "attach"}


async def test_topic_applies_the_rule_and_replays_it_after_a_restart(
    home: Path, workspace: Path
) -> None:
    config(home, "topic")
    async with make_rig(script(), home, workspace) as rig:
        sid = await converse(rig)
        await rig.turn(sid, SPECIFIC)
        sent = rig.sent_text()
        assert EXCHANGES[1][1] in sent, "the answer that introduced the term is on the path"
        assert EXCHANGES[2][1] not in sent and EXCHANGES[3][1] not in sent, "later topics are not"
        tree = await rig.call("bonsai/tree/get", sessionId=sid)
        nodes = by_label(tree)
        assert nodes[SPECIFIC]["parentId"] == nodes[EXCHANGES[1][1]]["nodeId"]
        assert nodes[SPECIFIC]["attach"]["placed"] is True
        assert any(p["op"] == "attach" for p in events_of(rig.c).of("bonsai/tree/changed"))

        await rig.restart()
        assert await rig.call("bonsai/tree/get", sessionId=sid) == tree, "replayed identically"


async def test_off_computes_nothing(home: Path, workspace: Path) -> None:
    config(home, "off")
    async with make_rig(script(), home, workspace) as rig:
        sid = await converse(rig)
        tree = await rig.call("bonsai/tree/get", sessionId=sid)
        assert tree["attachMode"] == "off"
        assert all("attach" not in n for n in tree["nodes"])


async def test_every_tree_op_reaches_a_second_client(home: Path, workspace: Path) -> None:
    config(home, "suggest")
    async with run_simulator(script()) as sim:
        env = sim_env(home, sim.openai_base_url)
        actor, watcher = await asyncio.gather(
            start_client([*BONSAI, "connect"], env), start_client([*BONSAI, "connect"], env)
        )
        try:
            sid = (await rpc(actor, "bonsai/session/create", {"workspace": str(workspace)}))[
                "sessionId"
            ]
            for client in (actor, watcher):
                await rpc(client, "bonsai/session/attach", {"sessionId": sid})
            await rpc(
                actor, "bonsai/session/append", {"sessionId": sid, "role": "user", "content": "hi"}
            )
            await rpc(
                actor,
                "bonsai/session/append",
                {"sessionId": sid, "role": "assistant", "content": "hello"},
            )
            tree = await rpc(actor, "bonsai/tree/get", {"sessionId": sid})
            q1, a1 = (n["nodeId"] for n in tree["nodes"])
            steps = [
                ("fork", {"nodeId": a1}),
                ("jump", {"nodeId": a1}),
                ("hide", {"nodeId": a1}),
                ("restore", {"nodeId": a1}),
                ("reparent", {"nodeId": a1, "parentId": q1}),
                ("attach", {"nodeId": q1}),
            ]
            for op, params in steps:
                await rpc(actor, f"bonsai/tree/{op}", {"sessionId": sid, **params})
            await events_of(watcher).wait_for("bonsai/tree/changed", lambda p: p["op"] == "attach")
            seen = events_of(watcher).of("bonsai/tree/changed")
            assert [p["op"] for p in seen] == [op for op, _ in steps]
            assert {p["sessionId"] for p in seen} == {sid}
        finally:
            for client in (actor, watcher):
                await close_client(client)
