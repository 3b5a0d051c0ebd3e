"""The ``bonsai`` console script: one subcommand per module."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from bonsai import __version__
from bonsai.services.config import bonsai_home


def _serve(args: argparse.Namespace) -> int:
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
        return asyncio.run(run(options))
    except (ServeError, StoreError) as error:
        print(f"bonsai serve: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _connect(args: argparse.Namespace) -> int:
    from bonsai.cli.connect import relay

    return relay(bonsai_home())


def _status(args: argparse.Namespace) -> int:
    from bonsai.cli.client import DaemonClient

    try:
        client = DaemonClient.connect(bonsai_home(), start=not args.no_start)
    except (ConnectionError, RuntimeError) as error:
        print(f"bonsai status: {error}", file=sys.stderr)
        return 1
    status = client.request("bonsai/daemon/status")
    client.close()
    if args.json:
        print(json.dumps(status, indent=2))
    else:
        print(f"bonsai {status['version']} (pid {status['pid']}), up {status['uptimeS']:.1f}s")
        print(f"  clients: {status['clients']}  sessions: {status['sessions']}")
        print(f"  database: {status['dbPath']}")
    return 0


def _stop(args: argparse.Namespace) -> int:
    from bonsai.cli.client import DaemonClient

    try:
        client = DaemonClient.connect(bonsai_home(), start=False)
    except ConnectionError:
        print("bonsai stop: no daemon is running")
        return 0
    client.request("bonsai/daemon/stop")
    print("bonsai daemon stopping")
    return 0


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

    return run_demo(keep=args.keep)


def _sim(args: argparse.Namespace) -> int:
    from bonsai.sim.__main__ import main as sim_main

    return sim_main(args.sim_args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bonsai",
        description="bonsai: a context-managing daemon for LLM coding agents.",
    )
    parser.add_argument("--version", action="version", version=f"bonsai {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = sub.add_parser("serve", help="run the daemon (stdio, unix socket, loopback TCP)")
    serve.add_argument("--stdio", action="store_true", help="serve one client on stdin/stdout")
    serve.add_argument("--socket", metavar="PATH", help="serve many clients on a unix socket")
    serve.add_argument("--tcp", metavar="HOST:PORT", help="also serve on loopback TCP (token)")
    serve.set_defaults(func=_serve)

    connect = sub.add_parser("connect", help="bridge stdio to the shared daemon (editors)")
    connect.set_defaults(func=_connect)

    status = sub.add_parser("status", help="show the daemon's status")
    status.add_argument("--json", action="store_true")
    status.add_argument("--no-start", action="store_true", help="do not start a daemon")
    status.set_defaults(func=_status)

    stop = sub.add_parser("stop", help="stop the daemon")
    stop.set_defaults(func=_stop)

    demo = sub.add_parser("demo", help="a whole coding session offline (no API key)")
    demo.add_argument("--keep", action="store_true", help="keep the demo's temporary folder")
    demo.set_defaults(func=_demo)

    from bonsai.cli.chat import add_chat_commands

    add_chat_commands(sub)

    from bonsai.services.memory.cli import add_memory_commands

    add_memory_commands(sub)

    from bonsai.cli.doctor import add_doctor_command

    add_doctor_command(sub)

    from bonsai.cli.replay import add_replay_commands

    add_replay_commands(sub)

    from bonsai.services.repomap.cli import add_repomap_command

    add_repomap_command(sub)

    sim = sub.add_parser("sim", help="run the provider simulator (see `bonsai sim -- --help`)")
    sim.add_argument("sim_args", nargs=argparse.REMAINDER)
    sim.set_defaults(func=_sim)

    dev = sub.add_parser("dev", help="developer tasks")
    dev_sub = dev.add_subparsers(dest="dev_command", metavar="TASK", required=True)
    gen = dev_sub.add_parser("gen-protocol", help="regenerate protocol schemas, TS, Lua, docs")
    gen.add_argument("--root", default=".", help="repository root")
    gen.set_defaults(func=_gen_protocol)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    return int(args.func(args))
