"""Faults on both wires: retries (honouring retry-after), give-up messages,
timeouts, broken and malformed streams, auth and bad requests, cancellation."""

from __future__ import annotations

import asyncio
import socket
import time
from email.utils import formatdate

import httpx
import pytest
from provider_helpers import MakeProvider, SleepRecorder, collect, of_type, request, text_of

from bonsai.domain import Message
from bonsai.services.providers import Provider, ProviderError, ProviderEvent, make_provider
from bonsai.services.providers.openai_chat import OpenAIChatProvider
from bonsai.settings import ProviderSettings
from bonsai.sim import Fault, Reply, Rule, Script, Simulator

WIRES = ["sim", "anthropic"]
MODEL = {"sim": "gpt-4o-mini", "anthropic": "claude-sonnet-4-5", "openai-compatible": "o3"}
LONG = Reply(text=" ".join(f"word{i}" for i in range(60)))


def always(fault: Fault) -> Rule:
    return Rule(match="", fault=fault)


async def outcomes(sim: Simulator) -> list[str]:
    return [r.outcome for r in sim.requests]


async def failure(
    provider: Provider, wire: str, *messages: Message
) -> tuple[list[ProviderEvent], ProviderError]:
    seen: list[ProviderEvent] = []
    with pytest.raises(ProviderError) as info:
        async for event in provider.stream(request(MODEL[wire], *messages)):
            seen.append(event)
    return seen, info.value


@pytest.mark.parametrize("wire", WIRES)
async def test_429_is_retried_after_the_servers_retry_after(
    wire: str, sim: Simulator, make: MakeProvider, sleeps: SleepRecorder
) -> None:
    sim.set_script(
        Script(steps=[Reply(text="made it")], faults={1: Fault(kind="rate_limit", retry_after="2")})
    )
    events = await collect(make(wire), request(MODEL[wire]))
    assert text_of(events) == "made it"  # the faulted call did not use up the step
    assert sleeps.delays == [2.0]
    assert await outcomes(sim) == ["fault:rate_limit", "ok"]


async def test_retry_after_as_an_http_date_is_honoured(
    sim: Simulator, make: MakeProvider, sleeps: SleepRecorder
) -> None:
    when = formatdate(time.time() + 30, usegmt=True)
    sim.set_script(Script(faults={1: Fault(kind="rate_limit", retry_after=when)}))
    await collect(make(), request("gpt-4o-mini"))
    assert len(sleeps.delays) == 1 and 28.0 <= sleeps.delays[0] <= 30.0


@pytest.mark.parametrize("wire", WIRES)
async def test_500_is_retried_with_backoff_then_surfaces_clearly(
    wire: str, sim: Simulator, make: MakeProvider, sleeps: SleepRecorder
) -> None:
    sim.set_script(Script(rules=[always(Fault(kind="server_error"))]))
    _, err = await failure(make(wire, max_retries=2, retry_base_delay_s=1.0), wire)
    assert err.kind == "server" and err.status == 500 and err.retryable
    assert "gave up after 3 attempts" in str(err) and "simulated" in str(err)
    assert len(sleeps.delays) == 2 and 0.5 <= sleeps.delays[0] <= 1.0 <= sleeps.delays[1] <= 2.0
    assert await outcomes(sim) == ["fault:server_error"] * 3


async def test_anthropic_overloaded_529_counts_as_a_server_error(
    sim: Simulator, make: MakeProvider
) -> None:
    sim.set_script(Script(faults={1: Fault(kind="server_error", status=529, message="Overloaded")}))
    events = await collect(make("anthropic"), request(MODEL["anthropic"]))
    assert events[-1].type == "done"
    assert [r.status for r in sim.requests] == [529, 200]


@pytest.mark.parametrize("wire", WIRES)
async def test_a_silent_server_times_out_at_read_timeout(
    wire: str, sim: Simulator, make: MakeProvider
) -> None:
    sim.set_script(Script(rules=[always(Fault(kind="slow_first_byte", delay_s=5))]))
    started = time.monotonic()
    _, err = await failure(make(wire, read_timeout_s=0.2, max_retries=0), wire)
    assert err.kind == "timeout" and "read_timeout_s" in err.message
    assert time.monotonic() - started < 2.0


@pytest.mark.parametrize("wire", WIRES)
async def test_a_stream_that_stalls_midway_ends_at_read_timeout_with_its_text(
    wire: str, sim: Simulator, make: MakeProvider
) -> None:
    sim.set_script(Script(steps=[LONG], faults={1: Fault(kind="stall", after_events=5, delay_s=5)}))
    seen: list[ProviderEvent] = []
    with pytest.raises(ProviderError) as info:
        async for event in make(wire, read_timeout_s=0.3).stream(request(MODEL[wire])):
            seen.append(event)
            last = time.monotonic()
    assert time.monotonic() - last < 2.0  # the stall is 5 s
    err = info.value
    assert err.kind == "timeout" and "sent nothing for 0.3 s (read_timeout_s)" in err.message
    assert text_of(seen) and text_of(seen) != LONG.text  # what came before the stall was shown
    assert len(sim.requests) == 1  # not replayed: the text would be doubled


async def test_a_timeout_before_any_event_is_retried(sim: Simulator, make: MakeProvider) -> None:
    sim.set_script(
        Script(
            steps=[Reply(text="late but fine")],
            faults={1: Fault(kind="slow_first_byte", delay_s=3)},
        )
    )
    events = await collect(make(read_timeout_s=0.2, max_retries=1), request("gpt-4o-mini"))
    assert text_of(events) == "late but fine"


@pytest.mark.parametrize("wire", WIRES)
async def test_a_stream_dropped_midway_is_a_broken_stream_and_not_replayed(
    wire: str, sim: Simulator, make: MakeProvider
) -> None:
    sim.set_script(Script(steps=[LONG], faults={1: Fault(kind="drop", after_events=6)}))
    seen, err = await failure(make(wire), wire)
    assert err.kind == "broken_stream" and "midway" in err.message
    assert text_of(seen) and text_of(seen) != LONG.text  # partial text was delivered
    assert len(sim.requests) == 1


@pytest.mark.parametrize("wire", WIRES)
async def test_a_drop_before_the_first_event_is_retried(
    wire: str, sim: Simulator, make: MakeProvider
) -> None:
    sim.set_script(
        Script(steps=[Reply(text="second try")], faults={1: Fault(kind="drop", after_events=0)})
    )
    assert text_of(await collect(make(wire), request(MODEL[wire]))) == "second try"
    assert await outcomes(sim) == ["fault:drop", "ok"]


@pytest.mark.parametrize("wire", WIRES)
async def test_a_malformed_sse_line_is_reported_with_what_was_wrong(
    wire: str, sim: Simulator, make: MakeProvider
) -> None:
    sim.set_script(Script(steps=[LONG], faults={1: Fault(kind="malformed", after_events=4)}))
    _, err = await failure(make(wire), wire)
    assert err.kind == "malformed" and "not JSON" in err.message and "truncated" in err.message
    assert len(sim.requests) == 1


@pytest.mark.parametrize("wire", WIRES)
async def test_a_wrong_key_is_an_auth_error_and_not_retried(
    wire: str, sim: Simulator, make: MakeProvider
) -> None:
    sim.set_script(Script(require_api_key="the-right-key"))
    _, err = await failure(make(wire, env={"ANTHROPIC_API_KEY": "wrong-key-123"}), wire)
    assert err.kind == "auth" and err.status == 401 and not err.retryable
    assert len(sim.requests) == 1


@pytest.mark.parametrize("wire", WIRES)
async def test_a_gateways_html_error_page_is_one_line_with_its_title_and_retried(
    wire: str, sim: Simulator, make: MakeProvider, sleeps: SleepRecorder
) -> None:
    # nginx in front of a provider answers 502 with its own page: the user read
    # the page's eight lines of markup, "<html>\n<head><title>..." in the error.
    sim.set_script(Script(rules=[always(Fault(kind="html_page"))]))
    _, err = await failure(make(wire, max_retries=1), wire)
    assert err.kind == "server" and err.status == 502 and err.retryable
    assert err.message.endswith(
        'server error: HTML page "502 Bad Gateway" (gave up after 2 attempts)'
    )
    assert "\n" not in err.message and "<" not in err.message
    assert await outcomes(sim) == ["fault:html_page"] * 2


@pytest.mark.parametrize("wire", WIRES)
async def test_a_proxys_sign_in_page_with_200_is_named_and_not_retried(
    wire: str, sim: Simulator, make: MakeProvider, sleeps: SleepRecorder
) -> None:
    # A corporate proxy or captive portal answers 200 with a web page: the user
    # read "stream ended before [DONE]" after five silent attempts.
    page = Fault(kind="html_page", status=200, message="Sign in to Example Corp proxy")
    sim.set_script(Script(rules=[always(page)]))
    _, err = await failure(make(wire), wire)
    assert err.kind == "malformed" and not err.retryable and err.status == 200
    assert "a web page (text/html) instead of an event stream" in err.message
    assert "Sign in to Example Corp proxy" in err.message and "base_url" in err.message
    assert len(sim.requests) == 1 and sleeps.delays == []


async def test_a_web_page_in_place_of_a_whole_answer_is_named(
    sim: Simulator, make: MakeProvider
) -> None:
    # the unstreamed call (a server that cannot stream a tool call) met the same page
    page = Fault(kind="html_page", status=200, message="Sign in to Example Corp proxy")
    sim.set_script(Script(rules=[always(page)]))
    provider = make()
    assert isinstance(provider, OpenAIChatProvider)
    with pytest.raises(ProviderError) as info:
        _ = [event async for event in provider.complete(request("gpt-4o-mini"))]
    assert info.value.kind == "malformed" and "not JSON" in info.value.message
    assert 'HTML page "Sign in to Example Corp proxy"' in info.value.message


async def test_bad_request_carries_the_providers_message(
    sim: Simulator, make: MakeProvider
) -> None:
    _, err = await failure(make("openai-compatible", model="o3"), "openai-compatible")
    assert err.kind == "bad_request" and err.status == 400
    assert "max_completion_tokens" in err.message  # the server's own words


async def test_anthropic_bad_request_for_an_orphan_tool_result(make: MakeProvider) -> None:
    orphan = Message(role="tool", tool_call_id="toolu_missing", content="x")
    _, err = await failure(
        make("anthropic"), "anthropic", Message(role="user", content="hi"), orphan
    )
    assert err.kind == "bad_request" and "toolu_missing" in err.message


async def test_an_unreachable_server_is_a_connect_error(make: MakeProvider) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    provider = make(max_retries=0, base_url=f"http://127.0.0.1:{port}/v1")
    _, err = await failure(provider, "sim")
    assert err.kind == "connect" and "could not connect" in err.message


@pytest.mark.parametrize("wire", WIRES)
async def test_cancelling_the_caller_closes_the_stream_promptly(
    wire: str, sim: Simulator, make: MakeProvider
) -> None:
    sim.set_script(Script(steps=[LONG], latency_ms=20))
    provider = make(wire)
    first = asyncio.Event()

    async def consume() -> None:
        async for _ in provider.stream(request(MODEL[wire])):
            first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), 5)
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 0.5
    for _ in range(100):  # the server notices the closed socket at its next event
        if sim.requests[-1].outcome != "pending":
            break
        await asyncio.sleep(0.01)
    assert sim.requests[-1].outcome == "client_closed"


async def test_closing_the_provider_mid_stream_raises_cancelled(
    sim: Simulator, make: MakeProvider
) -> None:
    sim.set_script(Script(steps=[LONG], latency_ms=20))
    provider = make()
    seen: list[ProviderEvent] = []
    with pytest.raises(ProviderError) as info:
        async for event in provider.stream(request("gpt-4o-mini")):
            seen.append(event)
            if len(seen) == 1:
                await provider.aclose()
    assert info.value.kind == "cancelled" and not info.value.retryable
    assert of_type(seen, "text_delta")


async def test_a_stream_shape_no_check_anticipated_is_still_a_provider_error() -> None:
    # A server no real provider resembles (tool_calls is a number), served in-process.
    body = b'data: {"choices": [{"index": 0, "delta": {"tool_calls": 5}}]}\n\n'

    def handler(_: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    settings = ProviderSettings(provider="sim", base_url="http://odd.test/v1", max_retries=0)
    provider = make_provider(settings, env={}, transport=httpx.MockTransport(handler))
    with pytest.raises(ProviderError) as info:
        await collect(provider, request("gpt-4o-mini"))
    assert info.value.kind == "malformed" and "could not read" in info.value.message
    await provider.aclose()


@pytest.mark.parametrize("wire", WIRES)
async def test_a_lone_surrogate_in_a_delta_becomes_the_replacement_character(
    wire: str, sim: Simulator, make: MakeProvider
) -> None:
    # A provider that cuts an emoji's surrogate pair sends "\ud83d" alone: a str
    # that UTF-8 cannot encode, which broke redaction, SQLite and the frames.
    sim.set_script(Script(steps=[Reply(text="cut \ud83d here, whole \U0001f600 there")]))
    text = text_of(await collect(make(wire), request(MODEL[wire])))
    assert text == "cut \ufffd here, whole \U0001f600 there"
    text.encode("utf-8")  # what every later step does with it
