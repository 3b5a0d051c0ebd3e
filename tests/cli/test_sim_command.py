"""Finding 3 (issue 20): ``bonsai sim`` takes the simulator's own options."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx
from cli_helpers import run

from bonsai_testing import BONSAI, bonsai_env


def test_bonsai_sim_help_lists_its_options(home: Path) -> None:
    result = run(home, "sim", "--help")
    assert result.returncode == 0
    for option in ("--port", "--script", "--fault", "--require-api-key", "--latency-ms"):
        assert option in result.stdout


def test_a_bad_fault_is_refused_with_the_expected_form(home: Path) -> None:
    result = run(home, "sim", "--fault", "first:boom")
    assert result.returncode == 2
    assert "expected N:KIND" in result.stderr and "rate_limit" in result.stderr


def test_bonsai_sim_serves_with_a_key_check_and_an_injected_fault(home: Path) -> None:
    process = subprocess.Popen(
        [*BONSAI, "sim", "--port", "0", "--require-api-key", "k1", "--fault", "2:rate_limit"],
        env=bonsai_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert "bonsai sim listening on" in line, line
        base = line.split("OpenAI base URL ")[1].split(",")[0]
        body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
        url = f"{base}/chat/completions"
        assert httpx.post(url, json=body, timeout=30).status_code == 401
        good = {"Authorization": "Bearer k1"}
        assert httpx.post(url, json=body, headers=good, timeout=30).status_code == 200
        assert httpx.post(url, json=body, headers=good, timeout=30).status_code == 429
    finally:
        process.terminate()
        process.wait(timeout=30)
