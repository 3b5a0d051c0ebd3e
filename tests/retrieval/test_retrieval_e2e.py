"""What retrieval returns, end to end: agent loop → recall tool → simulator, over JSON-RPC.

Search hits are served by size (as is / verbatim excerpt / one-line pointer
whose fetch returns the exact text), each answer comes with its question, and
the current text of related files the session read follows the hits.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bonsai.sim import Script
from bonsai.sim.script import Reply
from episodes.rig import Rig, call, make_rig, write_config

WORD = "quokka"


def build_log(lines: int, needle_at: int) -> str:
    """About 16 tokens a line; the needle line names the question's word."""
    rows = [f"step {n}: compiled module m{n} in {n % 97} ms, cache warm." for n in range(lines)]
    rows[needle_at] = f"step {needle_at}: the {WORD} loader rejected an empty TOML table."
    return "\n".join(rows)


SHORT = build_log(30, 20)  # ~500 tokens: served as is
MEDIUM = build_log(125, 90)  # ~2,000 tokens: a verbatim excerpt
LONG = build_log(625, 400)  # ~10,000 tokens: one pointer line


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def last_tool_text(rig: Rig) -> str:
    return str(next(m for m in reversed(rig.sent()) if m["role"] == "tool")["content"])


async def ask(rig: Rig, sid: str, text: str, *steps: Reply) -> str:
    """One user turn whose model replies are ``steps``; the last tool result it saw."""
    rig.sim.set_script(Script(steps=list(steps)))
    await rig.turn(sid, text)
    return last_tool_text(rig)


async def test_recall_serves_hits_by_size_and_the_pointer_fetches_the_exact_text(
    home: Path, workspace: Path
) -> None:
    async with make_rig(Script(), home, workspace) as rig:
        sid = await rig.session()
        for question, answer in [
            ("Show the short build log.", SHORT),
            ("Show the medium build log.", MEDIUM),
            ("Paste the whole trace.", LONG),
        ]:
            rig.sim.set_script(Script(steps=[Reply(text=answer)]))
            await rig.turn(sid, question)
        found = await ask(
            rig, sid, f"What did the {WORD} loader reject?",
            Reply(tool_calls=[call("recall", query=f"{WORD} loader")]),
            Reply(text="An empty table."),
        )  # fmt: skip
        assert found.startswith('<untrusted-data source="recall">')
        assert SHORT in found, "up to 800 tokens: the text as it is"
        assert "[excerpt, not the original:" in found
        assert MEDIUM.splitlines()[90] in found and MEDIUM not in found, "matching line, verbatim"
        pointer = re.search(r"\[assistant answer: 625 lines, .*\]", found)
        assert pointer is not None and LONG.splitlines()[300] not in found
        assert 'it begins "step 0: compiled module m0' in pointer.group(0)
        for question in ("Show the medium build log.", "Paste the whole trace."):
            assert f"]\n{question}\n[answer:]" in found, "each answer comes with its question"

        fetch = re.search(r'recall\(\{"message": "([^"]+)"\}\)', pointer.group(0))
        assert fetch is not None
        assert await fetched(rig, sid, fetch.group(1)) == LONG, "the pointer's text, exactly"


async def fetched(rig: Rig, sid: str, message_id: str) -> str:
    """Follow recall {message} pages to the end; the text they carry."""
    cursor, pages = 0, []
    while True:
        args: dict[str, Any] = {"message": message_id, "cursor": cursor}
        page = await ask(
            rig,
            sid,
            "Fetch the trace.",
            Reply(tool_calls=[call("recall", **args)]),
            Reply(text="ok"),
        )
        body = page.split("the exact original text:\n", 1)[1].rsplit("\n</untrusted-data>", 1)[0]
        more = re.search(r'\[more: recall\(\{"message": "[^"]+", "cursor": (\d+)\}\)\]$', body)
        if more is None:
            pages.append(body)
            return "".join(pages)
        pages.append(body[: more.start()])
        cursor = int(more.group(1))


RETRY_QUESTION = "Where is the retry limit configured?"
RETRY_ANSWER = "The retry limit lives in config/retry.toml as max_attempts = 7."


@pytest.mark.parametrize("mandatory", [True, False])
async def test_a_recalled_answer_comes_with_its_question(
    home: Path, workspace: Path, mandatory: bool
) -> None:
    if not mandatory:
        write_config(home, {"retrieval": {"mandatory_context": False}})
    async with make_rig(Script(), home, workspace) as rig:
        sid = await rig.session()
        rig.sim.set_script(Script(steps=[Reply(text=RETRY_ANSWER)]))
        await rig.turn(sid, RETRY_QUESTION)
        rig.sim.set_script(Script(steps=[Reply(text="Noted.")]))
        await rig.turn(sid, "Unrelated: rename the module.")
        found = await ask(
            rig, sid, "Remind me of max_attempts.",
            Reply(tool_calls=[call("recall", query="max_attempts")]),
            Reply(text="7."),
        )  # fmt: skip
        with_question = f"]\n{RETRY_QUESTION}\n[answer:]\n{RETRY_ANSWER}"
        assert (with_question in found) is mandatory
        assert RETRY_ANSWER in found
        hits = (await rig.call("bonsai/episodes/recall", sessionId=sid, query="max_attempts"))[
            "results"
        ]
        answer = next(h for h in hits if h["role"] == "assistant")
        assert answer.get("question") == (RETRY_QUESTION if mandatory else None)


def numbered(prefix: str, count: int, last: str) -> str:
    rows = [f"{prefix}_{n} = {n}  # retry tuning value number {n}" for n in range(count)]
    return "\n".join([*rows, last]) + "\n"


@pytest.mark.parametrize(
    ("mode", "medium_whole", "big_whole"),
    [("auto", True, False), ("digest", False, False), ("full", True, True), ("off", None, None)],
)
async def test_file_regions_return_todays_text_per_mode(
    home: Path, workspace: Path, mode: str, medium_whole: bool | None, big_whole: bool | None
) -> None:
    if mode != "auto":
        write_config(home, {"retrieval": {"file_region": mode}})
    (workspace / "config").mkdir()
    (workspace / "config" / "retry.toml").write_text("[retry]\nmax_attempts = 7\n")
    (workspace / "medium.py").write_text(numbered("medium", 40, "END_OF_MEDIUM = True"))
    (workspace / "big.py").write_text(numbered("big", 200, "END_OF_BIG = True"))
    (workspace / "unrelated.txt").write_text("nothing to see here\n")
    async with make_rig(Script(), home, workspace) as rig:
        sid = await rig.session()
        reads = [
            Reply(tool_calls=[call("read_file", path=p)])
            for p in ("config/retry.toml", "medium.py", "big.py", "unrelated.txt")
        ]
        rig.sim.set_script(Script(steps=[*reads, Reply(text="max_attempts is 7.")]))
        await rig.turn(sid, "Check the retry settings.")
        (workspace / "config" / "retry.toml").write_text("[retry]\nmax_attempts = 9\n")
        found = await ask(
            rig, sid, "What is the retry limit now?",
            Reply(tool_calls=[call("recall", query="retry max_attempts")]),
            Reply(text="9."),
        )  # fmt: skip
    if mode == "off":
        assert "[current text of" not in found
        return
    region = found.split("--- current files related to the question\n", 1)[1]
    assert (
        "[current text of config/retry.toml, lines 1-2 of 2, read from disk now (changed" in region
    )
    assert "max_attempts = 9" in region, "today's text, not the historic read"
    assert "unrelated.txt" not in region
    assert ("END_OF_MEDIUM" in region) is medium_whole
    assert ("END_OF_BIG" in region) is big_whole
    if not big_whole:
        assert "[head only:" in region and 'read_file {"path": "big.py", "offset": ' in region


def test_the_tool_schema_offers_message_fetch() -> None:
    from bonsai.agent.tools.recall import TOOL

    spec = json.dumps(TOOL.spec())
    assert '"message"' in spec and "exact original text" in spec


async def test_the_question_is_the_one_above_in_the_tree_not_in_the_log(
    home: Path, workspace: Path
) -> None:
    moved = "The rename also touches max_attempts in config/retry.toml."
    async with make_rig(Script(), home, workspace) as rig:
        sid = await rig.session()
        for question, answer in [(RETRY_QUESTION, RETRY_ANSWER), ("Rename the module.", moved)]:
            rig.sim.set_script(Script(steps=[Reply(text=answer)]))
            await rig.turn(sid, question)
        log = (await rig.call("bonsai/session/attach", sessionId=sid))["messages"]
        _, a1, _, a2 = (m["messageId"] for m in log)
        hits = await rig.call("bonsai/episodes/recall", sessionId=sid, query="rename touches")
        assert hits["results"][0]["question"] == "Rename the module."
        await rig.call("bonsai/tree/reparent", sessionId=sid, nodeId=a2, parentId=a1)
        hits = await rig.call("bonsai/episodes/recall", sessionId=sid, query="rename touches")
        first = hits["results"][0]
        assert (first["messageId"], first["question"]) == (a2, RETRY_QUESTION)
