"""Real third-party servers on loopback, started once per test session (see
servers.py; ``tests/real_server/setup.sh`` installs them)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llama_servers import (
    CPP_SERVER_CTX,
    LLAMA_SERVER,
    MODEL_ALIAS,
    PY_SERVER_CTX,
    VENV_PY,
    RunningServer,
    free_port,
    missing,
    model_file,
    start_server,
    stop_server,
)

__all__ = ["cpp_server", "py_plain_server", "py_server"]


def _py_server(tmp: pytest.TempPathFactory, name: str, *extra: str) -> RunningServer:
    if not VENV_PY.exists():
        missing("llama-cpp-python is not installed")
    model = model_file()
    port = free_port()
    command = [
        str(VENV_PY), "-m", "llama_cpp.server",
        "--model", str(model), "--model_alias", MODEL_ALIAS,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(PY_SERVER_CTX), "--n_threads", "1", "--n_threads_batch", "1",
        *extra,
    ]  # fmt: skip
    return start_server(command, name, PY_SERVER_CTX, port, tmp.mktemp(name))


@pytest.fixture(scope="session")
def py_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """llama-cpp-python's ``llama_cpp.server`` with the function-calling chat format."""
    server = _py_server(
        tmp_path_factory, "llama_cpp.server", "--chat_format", "chatml-function-calling"
    )
    yield server
    stop_server(server)


@pytest.fixture(scope="session")
def py_plain_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """``llama_cpp.server`` with the model's own chat template (it drops ``tools``)."""
    server = _py_server(tmp_path_factory, "llama_cpp.server-plain")
    yield server
    stop_server(server)


@pytest.fixture(scope="session")
def cpp_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """llama.cpp's C++ ``llama-server`` (it serves ``/props``)."""
    if not LLAMA_SERVER.exists():
        missing("llama-server is not built")
    model = model_file()
    port = free_port()
    command = [
        str(LLAMA_SERVER), "--model", str(model), "--alias", MODEL_ALIAS,
        "--host", "127.0.0.1", "--port", str(port),
        "--ctx-size", str(CPP_SERVER_CTX), "--parallel", "1", "--threads", "1",
    ]  # fmt: skip
    server = start_server(
        command, "llama-server", CPP_SERVER_CTX, port, tmp_path_factory.mktemp("cpp")
    )
    yield server
    stop_server(server)
