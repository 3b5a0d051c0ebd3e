"""A turn whose reply is shown but whose post-turn steps still run: a tree move or a
retry asked then waits for those steps instead of being refused; a turn still
streaming is refused at once, as before."""

from __future__ import annotations

import asyncio

from bonsai.agent.runtime import SessionRuntime
from bonsai.protocol import models as m


async def test_a_finished_turns_post_turn_steps_are_waited_for_a_streaming_turn_is_not() -> None:
    published: list[object] = []
    rt = SessionRuntime("s_test", published.append)
    streaming, ended, release = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def run_turn(turn_id: str, text: str) -> str:
        rt.emit(turn_id, m.DeltaEvent(text="partial"))
        streaming.set()
        await release.wait()  # the model still streams
        rt.emit(turn_id, m.DoneEvent())
        ended.set()
        await asyncio.sleep(0.3)  # post-turn steps: reflection, promotion, attachment
        return "done"

    rt.send("hello", run_turn)
    await streaming.wait()
    assert not await rt.settled(within_s=5.0), "a streaming turn is refused, not waited for"
    release.set()
    await ended.wait()
    assert rt.running is not None, "the reply is shown, the post-turn steps still run"
    assert await rt.settled(within_s=5.0), "waited for the post-turn steps"
    assert rt.running is None


async def test_post_turn_steps_longer_than_the_bound_are_refused() -> None:
    rt = SessionRuntime("s_test", lambda _: None)
    ended = asyncio.Event()

    async def run_turn(turn_id: str, text: str) -> str:
        rt.emit(turn_id, m.DoneEvent())
        ended.set()
        await asyncio.sleep(5)
        return "done"

    rt.send("hello", run_turn)
    await ended.wait()
    assert not await rt.settled(within_s=0.1)
    rt.cancel(None)


async def test_a_request_sent_as_the_last_delta_arrives_waits_for_the_turns_end() -> None:
    """The reply's last delta is shown before the provider's stream has ended: a tree
    move sent then waits for the end (and the post-turn steps) instead of a refusal."""
    rt = SessionRuntime("s_test", lambda _: None)
    last_delta = asyncio.Event()

    async def run_turn(turn_id: str, text: str) -> str:
        rt.emit(turn_id, m.DeltaEvent(text="the whole reply"))
        last_delta.set()
        await asyncio.sleep(0.2)  # the stream's end still on its way
        rt.emit(turn_id, m.DoneEvent())
        await asyncio.sleep(0.1)  # post-turn steps
        return "done"

    rt.send("hello", run_turn)
    await last_delta.wait()
    assert await rt.settled(within_s=5.0), "refused a turn about to end"
    assert rt.running is None
