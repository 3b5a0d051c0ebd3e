"""The simulator's HTTP surface: control endpoints, routing, keep-alive,
recording, raw fault framing, the threaded runner and the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from bonsai.sim import Fault, Reply, Script, Simulator, SimulatorThread
from bonsai.sim.__main__ import main

CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hello"}]}


async def test_control_endpoints_replace_the_script_list_and_reset(sim: Simulator) -> None:
    async with httpx.AsyncClient(base_url=sim.base_url) as http:
        script = {"steps": [{"text": "scripted over HTTP"}]}
        assert (await http.post("/_sim/script", json=script)).json() == {"ok": True, "steps": 1}
        reply = await http.post("/v1/chat/completions", json=CHAT)
        assert reply.json()["choices"][0]["message"]["content"] == "scripted over HTTP"
        recorded = (await http.get("/_sim/requests")).json()
        assert [(r["route"], r["status"], r["outcome"]) for r in recorded] == [
            ("openai", 200, "ok")
        ]
        assert recorded[0]["body"] == CHAT
        await http.post("/_sim/reset")
        assert (await http.get("/_sim/requests")).json() == []
        bad = await http.post("/_sim/script", json={"steps": [{"txt": 1}]})
        assert bad.status_code == 400 and "invalid script" in bad.json()["error"]["message"]
        health = (await http.get("/_sim/health")).json()
        assert health["ok"] and health["tokenizer"] == "o200k_base"


async def test_unknown_routes_and_bad_json_get_clear_errors(sim: Simulator) -> None:
    async with httpx.AsyncClient(base_url=sim.base_url) as http:
        missing = await http.get("/v2/nothing")
        assert missing.status_code == 404 and "no route" in missing.json()["error"]["message"]
        garbled = await http.post("/v1/chat/completions", content=b"{nope")
        assert garbled.status_code == 400 and "not valid JSON" in garbled.json()["error"]["message"]
        no_version = await http.post(
            "/v1/messages", json={"model": "m", "max_tokens": 5, "messages": []}
        )
        assert no_version.status_code == 400
        assert no_version.json()["error"]["message"] == "anthropic-version: header is required"


async def test_one_connection_serves_many_requests(sim: Simulator) -> None:
    async with httpx.AsyncClient(base_url=sim.openai_base_url) as http:
        for _ in range(3):
            assert (await http.post("/chat/completions", json=CHAT)).status_code == 200
    assert len(sim.requests) == 3


async def test_credentials_are_recorded_only_as_lengths(sim: Simulator) -> None:
    async with httpx.AsyncClient(base_url=sim.base_url) as http:
        await http.post(
            "/v1/chat/completions", json=CHAT, headers={"authorization": "Bearer sk-very-secret"}
        )
    assert sim.requests[0].headers["authorization"] == "<redacted 21 chars>"


async def test_a_dropped_stream_ends_without_the_final_chunk(sim: Simulator) -> None:
    sim.set_script(
        Script(steps=[Reply(text="a b c d e f")], faults={1: Fault(kind="drop", after_events=2)})
    )
    body = {**CHAT, "stream": True}
    lines: list[str] = []
    async with httpx.AsyncClient(base_url=sim.base_url) as http:
        with pytest.raises(httpx.RemoteProtocolError):
            async with http.stream("POST", "/v1/chat/completions", json=body) as response:
                async for line in response.aiter_lines():
                    lines.append(line)
    assert len([line for line in lines if line.startswith("data:")]) == 2
    assert sim.requests[0].outcome == "fault:drop"


async def test_streams_are_deterministic_bytes(sim: Simulator) -> None:
    body = {**CHAT, "stream": True, "stream_options": {"include_usage": True}}
    async with httpx.AsyncClient(base_url=sim.base_url) as http:
        first = (await http.post("/v1/chat/completions", json=body)).text
        sim.reset()
        second = (await http.post("/v1/chat/completions", json=body)).text
    assert first == second and first.endswith("data: [DONE]\n\n")


async def test_a_script_without_usage_streams_none_although_asked(sim: Simulator) -> None:
    body = {**CHAT, "stream": True, "stream_options": {"include_usage": True}}
    async with httpx.AsyncClient(base_url=sim.base_url) as http:
        with_usage = (await http.post("/v1/chat/completions", json=body)).text
        sim.set_script(Script(steps=[Reply(text="hi")], usage=False))
        without = (await http.post("/v1/chat/completions", json=body)).text
    assert '"prompt_tokens"' in with_usage
    assert '"usage"' not in without and without.endswith("data: [DONE]\n\n")


async def test_latency_paces_the_stream(sim: Simulator) -> None:
    sim.set_script(Script(steps=[Reply(text="one two three four")], latency_ms=30))
    async with httpx.AsyncClient(base_url=sim.base_url) as http:
        response = await http.post("/v1/chat/completions", json={**CHAT, "stream": True})
    assert response.elapsed.total_seconds() >= 0.2  # 8 events x 30 ms


def test_threaded_simulator_serves_sync_code_and_stops() -> None:
    with SimulatorThread(Script(steps=[Reply(text="threaded")])) as sim:
        reply = httpx.post(f"{sim.openai_base_url}/chat/completions", json=CHAT)
        assert reply.json()["choices"][0]["message"]["content"] == "threaded"
        sim.set_script(Script(steps=[Reply(text="changed")]))
        assert (
            httpx.post(f"{sim.openai_base_url}/chat/completions", json=CHAT).json()["choices"][0][
                "message"
            ]["content"]
            == "changed"
        )
        assert len(sim.requests) == 2
        port = sim.port
    with pytest.raises(httpx.ConnectError):
        httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=CHAT)


def test_cli_rejects_a_bad_script_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "script.json"
    bad.write_text('{"steps": "not a list"}')
    assert main(["--script", str(bad)]) == 2
    assert "invalid script" in capsys.readouterr().err


def test_cli_serves_a_script_with_latency(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": [{"text": "from the cli"}]}))
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [
        sys.executable,
        "-m",
        "bonsai.sim",
        "--port",
        "0",
        "--script",
        str(script),
        "--latency-ms",
        "1",
    ]
    with subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    ) as proc:
        try:
            assert proc.stdout is not None
            banner = proc.stdout.readline()
            assert "listening on http://127.0.0.1:" in banner, (
                proc.stderr.read() if proc.stderr else ""
            )
            base = banner.split("listening on ")[1].split(" ")[0]
            reply = httpx.post(f"{base}/v1/chat/completions", json=CHAT, timeout=10)
            assert reply.json()["choices"][0]["message"]["content"] == "from the cli"
        finally:
            proc.terminate()
            proc.wait(timeout=10)
