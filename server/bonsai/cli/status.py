"""``bonsai status``: the daemon, its provider, and each session's provider with its sources."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from bonsai.cli.client import DaemonClient
from bonsai.cli.client_settings import from_environment, settings_problems
from bonsai.cli.terminal_text import shown
from bonsai.home import bonsai_home


def _choice(choice: dict[str, Any]) -> list[str]:
    sources = choice.get("sources") or {}
    url = f" at {choice['baseUrl']}" if choice.get("baseUrl") else ""
    return [
        f"{choice['provider']}{url}, model {choice['model']}",
        f"    provider from {sources.get('provider', '?')}; model from "
        f"{sources.get('model', '?')}; key: {choice.get('key', '?')}",
    ]


def status_lines(status: dict[str, Any], started: bool) -> list[str]:
    when = "started just now by this command" if started else "already running"
    lines = [
        f"bonsai {status['version']} (pid {status['pid']}), up {status['uptimeS']:.1f}s, {when}",
        f"  clients: {status['clients']}  sessions: {status['sessions']}",
        f"  database: {status['dbPath']}",
    ]
    if status.get("views"):
        lines.append(f"  views: {status['views']}")
    if status.get("provider"):
        first, second = _choice(status["provider"])
        lines += [f"  default provider: {first}", f"  {second}"]
    for entry in status.get("sessionProviders") or []:
        first, second = _choice(entry["choice"])
        title = f" “{shown(entry['title'], newlines=False)}”" if entry.get("title") else ""
        lines += [f"  session {entry['sessionId']}{title}: {first}", f"  {second}"]
    mine = from_environment("bonsai status")
    names = [n for n in mine["names"] if not n.endswith("_API_KEY")]
    if names:
        lines.append(
            f"  this shell sets {', '.join(names)}: `bonsai chat` sends them with its next turn"
        )
    return lines


def status_command(args: argparse.Namespace) -> int:
    home = bonsai_home()
    try:
        client = DaemonClient.connect(home, start=not args.no_start)
    except (ConnectionError, RuntimeError) as error:
        print(f"bonsai status: {error}", file=sys.stderr)
        return 1
    try:
        status = client.request("bonsai/daemon/status")
        problems = settings_problems(client, os.getcwd(), "bonsai status")
    finally:
        client.close()
    if client.started:
        print(
            f"bonsai status: no daemon was running; started one (pid {status['pid']}, home {home})",
            file=sys.stderr,
        )
    for problem in problems:
        print(problem, file=sys.stderr)
    if args.json:
        print(json.dumps({**status, "startedNow": client.started}, indent=2))
    else:
        print("\n".join(status_lines(status, client.started)))
    return 0
