"""bash: run a command in the workspace with a timeout and bounded output capture."""

from __future__ import annotations

import asyncio
import os

from bonsai.agent.tools import procs
from bonsai.agent.tools.base import Args, Tool, ToolContext, ToolResult, arg_int, arg_str, schema
from bonsai.domain import Evidence
from bonsai.services.redaction import scrubbed_environment

KEEP_HEAD = 1024 * 1024
KEEP_TAIL = 1024 * 1024


class BoundedBuffer:
    """Keeps the first and last MiB of a stream: a 100 MB output costs 2 MiB."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = KEEP_HEAD - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > KEEP_TAIL:
                del self.tail[: len(self.tail) - KEEP_TAIL]

    def text(self) -> str:
        dropped = self.total - len(self.head) - len(self.tail)
        middle = f"\n[... {dropped} bytes of output dropped ...]\n".encode() if dropped else b""
        return bytes(self.head + middle + self.tail).decode("utf-8", errors="replace")


async def _pump(stream: asyncio.StreamReader, buffer: BoundedBuffer) -> None:
    while chunk := await stream.read(65536):
        buffer.add(chunk)


def _kill_group(pid: int) -> None:
    procs.kill_group(pid)


async def bash(ctx: ToolContext, args: Args) -> ToolResult:
    command = arg_str(args, "command")
    timeout = float(arg_int(args, "timeout") or ctx.settings.tools.bash_timeout_s)
    proc = await asyncio.create_subprocess_shell(
        command,
        cwd=ctx.workspace,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=procs.preexec(),  # dies with the daemon; the user's umask
        env=scrubbed_environment(os.environ),  # the daemon's provider keys stay with it
    )
    procs.started(proc.pid)
    on_start = ctx.services.process_started
    if on_start is not None:  # recorded, so a crash now reads "outcome unknown"
        on_start(proc.pid, procs.start_time(proc.pid))
    buffer = BoundedBuffer()
    assert proc.stdout is not None
    try:
        await asyncio.wait_for(_pump(proc.stdout, buffer), timeout)
        code = await proc.wait()
        status = f"[exit code {code}]"
    except TimeoutError:
        _kill_group(proc.pid)
        await proc.wait()
        code, status = -1, f"[timed out after {timeout:.0f}s; the command was killed]"
    finally:  # every way out: nothing of the command outlives it (background jobs too)
        _kill_group(proc.pid)
    output = buffer.text()
    evidence = Evidence(kind="command", ok=code == 0)
    return ToolResult(f"{output}\n{status}" if output else status, evidence, is_error=code != 0)


def _preview(ctx: ToolContext, args: Args) -> str | None:
    return f"$ {args.get('command', '')}"


TOOLS = [
    Tool(
        "bash",
        "Run a shell command in the workspace root. Output is captured (stdout+stderr).",
        schema({"command": {"type": "string"}, "timeout": {"type": "integer"}}, ["command"]),
        bash,
        needs_approval=True,
        preview=_preview,
    )
]
