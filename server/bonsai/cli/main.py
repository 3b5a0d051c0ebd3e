"""The ``bonsai`` console script: one subcommand per module."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bonsai import __version__
from bonsai.home import bonsai_home

PIPE_CLOSED = 141  # a shell's code for a command ended by SIGPIPE (128 + 13), as `git log | head`


def _serve(args: argparse.Namespace) -> int:
    import asyncio

    from bonsai.daemon import lifecycle
    from bonsai.daemon.server import ServeError, ServeOptions, parse_tcp, run
    from bonsai.services.store.db import StoreError

    home = bonsai_home()
    socket_path = None
    if args.socket:
        socket_path = (
            lifecycle.default_socket_path(home) if args.socket == "auto" else Path(args.socket)
        )
    if not (args.stdio or socket_path or args.tcp):
        socket_path = lifecycle.default_socket_path(home)
    try:
        tcp = parse_tcp(args.tcp) if args.tcp else None
        options = ServeOptions(home=home, stdio=args.stdio, socket_path=socket_path, tcp=tcp)
        code = asyncio.run(run(options))
    except (ServeError, StoreError) as error:
        print(f"bonsai serve: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    _exit_now(code)
    return code


def _exit_now(code: int) -> None:
    """The daemon closed its database and released its lock: leave without the interpreter's
    teardown, which takes seconds with the tokenizer, model and parser modules loaded (a client
    waiting on ``serve --stdio`` sees the process end within a second of its end of stream)."""
    import logging
    import os

    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _connect(args: argparse.Namespace) -> int:
    from bonsai.cli.connect import relay

    return relay(bonsai_home())


def _status(args: argparse.Namespace) -> int:
    from bonsai.cli.status import status_command

    return status_command(args)


def _stop(args: argparse.Namespace) -> int:
    from bonsai.cli.stop import stop_command

    return stop_command(bonsai_home())


def _gen_protocol(args: argparse.Namespace) -> int:
    from bonsai.protocol import codegen

    root = Path(args.root).resolve()
    written = codegen.write(root)
    for rel in written:
        print(f"wrote {rel}")
    if not written:
        print("protocol artefacts are up to date")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from bonsai.cli.demo import run_demo

    return run_demo()


def _sim(args: argparse.Namespace) -> int:
    from bonsai.sim.__main__ import run as run_sim

    return run_sim(args)


def _add_serve(sub: Any) -> None:
    serve = sub.add_parser("serve", help=_HELP["serve"])
    serve.add_argument("--stdio", action="store_true", help="serve one client on stdin/stdout")
    serve.add_argument("--socket", metavar="PATH", help="serve many clients on a unix socket")
    serve.add_argument("--tcp", metavar="HOST:PORT", help="also serve on loopback TCP (token)")
    serve.set_defaults(func=_serve)


def _add_connect(sub: Any) -> None:
    sub.add_parser("connect", help=_HELP["connect"]).set_defaults(func=_connect)


def _add_status(sub: Any) -> None:
    status = sub.add_parser("status", help=_HELP["status"])
    status.add_argument("--json", action="store_true", help="print the status as JSON")
    status.add_argument("--no-start", action="store_true", help="do not start a daemon")
    status.set_defaults(func=_status)


def _add_stop(sub: Any) -> None:
    sub.add_parser("stop", help=_HELP["stop"]).set_defaults(func=_stop)


def _add_demo(sub: Any) -> None:
    demo = sub.add_parser("demo", help=_HELP["demo"])
    # an older flag: the demo always keeps its folder now
    demo.add_argument("--keep", action="store_true", help=argparse.SUPPRESS)
    demo.set_defaults(func=_demo)


def _add_sim(sub: Any) -> None:
    from bonsai.sim.__main__ import add_arguments

    sim = sub.add_parser(
        "sim",
        help=_HELP["sim"],
        description="Run the bonsai LLM provider simulator (OpenAI and Anthropic wires).",
    )
    add_arguments(sim)
    sim.set_defaults(func=_sim)


def _add_dev(sub: Any) -> None:
    dev = sub.add_parser("dev", help=_HELP["dev"])
    dev_sub = dev.add_subparsers(dest="dev_command", metavar="TASK", required=True)
    gen = dev_sub.add_parser("gen-protocol", help="regenerate protocol schemas, TS, Lua, docs")
    gen.add_argument("--root", default=".", help="repository root")
    gen.set_defaults(func=_gen_protocol)


@dataclass(frozen=True)
class _Group:
    """Subcommands registered by one function, imported only when one of them is chosen."""

    names: tuple[str, ...]
    module: str
    adder: str


# The console script's subcommands in help order. Each group's module is imported only
# when the user picks one of its commands, so `bonsai status` never pays for the repo map.
_GROUPS: tuple[_Group, ...] = (
    _Group(("serve",), __name__, "_add_serve"),
    _Group(("connect",), __name__, "_add_connect"),
    _Group(("status",), __name__, "_add_status"),
    _Group(("stop",), __name__, "_add_stop"),
    _Group(("demo",), __name__, "_add_demo"),
    _Group(("chat", "ctx"), "bonsai.cli.chat", "add_chat_commands"),
    _Group(("memory", "remember"), "bonsai.cli.memory", "add_memory_commands"),
    _Group(("import", "replay", "recall"), "bonsai.cli.replay", "add_replay_commands"),
    _Group(("repomap",), "bonsai.cli.repomap", "add_repomap_command"),
    _Group(("doctor",), "bonsai.cli.doctor", "add_doctor_command"),
    _Group(("sim",), __name__, "_add_sim"),
    _Group(("dev",), __name__, "_add_dev"),
)

_HELP: dict[str, str] = {
    "serve": "run the daemon (stdio, unix socket, loopback TCP)",
    "connect": "bridge stdio to the shared daemon (editors)",
    "status": "show the daemon's status",
    "stop": "stop the daemon",
    "demo": "a whole coding session offline (no API key)",
    "chat": "send a message and stream the agent's reply",
    "ctx": "show where the context window goes",
    "memory": "manage persistent memory",
    "remember": "pin a fact in memory",
    "import": "import a recorded agent session into the session store",
    "replay": "replay a recording through the context pipeline, offline",
    "recall": "search a stored session's messages",
    "repomap": "print the repository map of a directory",
    "doctor": "check the home, the database and its backups (--restore a backup)",
    "sim": "run the provider simulator (see `bonsai sim --help`)",
    "dev": "developer tasks",
}


def _chosen(argv: list[str]) -> str | None:
    """The subcommand named on the command line (the first argument that is one)."""
    names = {name for group in _GROUPS for name in group.names}
    for arg in argv:
        if arg in names:
            return arg
        if not arg.startswith("-"):
            return None
    return None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser. Only the chosen subcommand's group (from ``argv``) is
    imported and configured in full; the others are listed by name and help.
    ``argv=None`` builds every subcommand in full (tests, docs)."""
    parser = argparse.ArgumentParser(
        prog="bonsai",
        description="bonsai: a context-managing daemon for LLM coding agents.",
    )
    parser.add_argument("--version", action="version", version=f"bonsai {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = _chosen(argv) if argv is not None else None
    for group in _GROUPS:
        if argv is None or chosen in group.names:
            getattr(importlib.import_module(group.module), group.adder)(sub)
        else:
            for name in group.names:
                sub.add_parser(name, help=_HELP[name], add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # a reader that left (`| head`) shows here, not at the exit
        return code
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the exit's own flush cannot fail again
        return PIPE_CLOSED
