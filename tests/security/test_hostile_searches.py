"""A search the whole daemon waited on: ``grep`` ran its regular expression on the
event loop, with Python's backtracking ``re``, over every line of every file. A
pattern models write every day (``function.*\\(.*config.*\\)``) over one minified
line of 196 KB backtracks for minutes (8 KB of it took 0.6 s, ``.*=.*;.*x`` over
8 KB took 524 s), and all that time no session streamed, no client was answered.

Against a real daemon with a scripted provider: the daemon answers while the grep
runs, the grep ends with the matches of the other files and names the file it gave
up on, and the turn finishes."""

from __future__ import annotations

import asyncio
from pathlib import Path

from security_helpers import call, make_rig

from bonsai.sim import Script
from bonsai.sim.script import Reply
from bonsai_testing import events_of, rpc

MINIFIED = "function f(a){return a.b=c;}" * 7000  # 196 KB on one line, as bundlers write
PATTERN = r"function.*\(.*config.*\)"


async def test_a_backtracking_grep_over_a_minified_file_blocks_nobody_and_ends(
    home: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    (workspace / "dist").mkdir(parents=True)
    (workspace / "src").mkdir()
    (workspace / "dist" / "app.min.js").write_text(MINIFIED + "\n")
    (workspace / "src" / "app.js").write_text("function load(config) {\n  return 1;\n}\n")
    script = Script(steps=[Reply(tool_calls=[call("grep", pattern=PATTERN)]), Reply(text="Done.")])
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        sent = await rpc(rig.client, "bonsai/chat/send", {"sessionId": sid, "text": "find it"})
        events = events_of(rig.client)

        def of_turn(kind: str) -> list[dict[str, object]]:
            return [
                p
                for p in events.of("bonsai/chat/event")
                if p["turnId"] == sent["turnId"] and p["kind"] == kind
            ]

        await events.wait_for(
            "bonsai/chat/event",
            lambda p: p["turnId"] == sent["turnId"] and p["kind"] == "toolCall",
            30,
        )
        status = await asyncio.wait_for(rig.status(), 30)
        assert status["pid"] > 0
        assert not of_turn("toolResult"), "the daemon answered while the grep was running"
        await events.wait_for(
            "bonsai/chat/event",
            lambda p: p["turnId"] == sent["turnId"] and p["kind"] in ("done", "error"),
            90,
        )
        [result] = of_turn("toolResult")
    assert not result["isError"], result
    content = str(result["result"])
    assert "src/app.js:1: function load(config) {" in content
    assert "dist/app.min.js" in content and "took too long" in content, content
    assert [e["kind"] for e in of_turn("done")] == ["done"]


async def test_a_glob_of_many_stars_over_a_long_file_name_ends_at_once(
    home: Path, tmp_path: Path
) -> None:
    """``*a*a*a*a*a*b`` became ``[^/]*a[^/]*a…`` for ``re``: over one file named with
    200 a's it backtracked for 505 s, on the event loop."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ("a" * 200)).write_text("x\n")
    (workspace / "ab").write_text("x\n")
    script = Script(
        steps=[Reply(tool_calls=[call("glob", pattern="*a*a*a*a*a*b")]), Reply(text="Done.")]
    )
    async with make_rig(script, home, workspace) as rig:
        events = await rig.turn(await rig.session(), "list them", timeout=60)
    [result] = rig.tool_results(events)
    assert not result["isError"], result
    assert result["result"] == "no files match '*a*a*a*a*a*b'"
    assert events[-1]["kind"] == "done"
