"""A rate-limited request tells the clients why nothing streams: a ``retry`` chat
event with the wait and the reason, before the backoff, then the reply."""

from __future__ import annotations

from pathlib import Path

from agent_helpers import make_rig

from bonsai.sim import Script
from bonsai.sim.faults import Fault
from bonsai.sim.script import Reply


async def test_a_429_is_announced_as_retrying_in_n_seconds(home: Path, workspace: Path) -> None:
    script = Script(
        steps=[Reply(text="after the wait")],
        faults={1: Fault(kind="rate_limit", retry_after="1")},
    )
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        _, events = await rig.turn(sid, "hello")
        kinds = [e["kind"] for e in events]
        assert "retry" in kinds, kinds
        retry = events[kinds.index("retry")]
        assert retry["text"] == "retrying in 1 s (rate limited; attempt 2)"
        assert retry["retryInS"] == 1.0 and retry["attempt"] == 1
        assert kinds.index("retry") < kinds.index("delta"), "announced before the reply streams"
        assert kinds[-1] == "done"


async def test_a_dropped_stream_is_announced_in_words(home: Path, workspace: Path) -> None:
    # the reason read "(broken stream; ...)", and a refused connection "(connect; ...)"
    script = Script(
        steps=[Reply(text="on the second try")],
        faults={1: Fault(kind="drop", after_events=0)},
    )
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        _, events = await rig.turn(sid, "hello")
        retries = [e["text"] for e in events if e["kind"] == "retry"]
        assert len(retries) == 1 and retries[0].startswith("retrying in "), retries
        assert retries[0].endswith(" s (the stream broke off; attempt 2)"), retries
        assert events[-1]["kind"] == "done"
