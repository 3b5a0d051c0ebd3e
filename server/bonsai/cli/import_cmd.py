"""``bonsai import FILE…``: recordings into the session store, through the daemon.

Every run of every file (or only ``--run K``) becomes a real session, stored
by the daemon (``bonsai/session/import``; started when none runs), so it is
listed in the editors at once and has its tree, episodes and ledger like any
session. A file that cannot be read is reported on its own line; the others
are still imported.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from bonsai.cli.client import DaemonClient, RpcError
from bonsai.cli.terminal_text import shown, terminal_json
from bonsai.home import bonsai_home

IMPORT_METHOD = "bonsai/session/import"
METHOD_NOT_FOUND = -32601


class ImportRefused(Exception):
    """The daemon refused one import (the message says why)."""


def import_run(client: DaemonClient, path: Path, fmt: str, run: int, workspace: Path) -> Any:
    params = {"path": str(path.resolve()), "format": fmt, "run": run, "workspace": str(workspace)}
    try:
        return client.request(IMPORT_METHOD, params)
    except RpcError as exc:
        if exc.code == METHOD_NOT_FOUND:
            raise ImportRefused(
                f"the running daemon does not offer {IMPORT_METHOD}; restart it with `bonsai stop`"
            ) from None
        raise ImportRefused(str(exc)) from None


def import_file_runs(
    client: DaemonClient, path: Path, fmt: str, run: int | None, workspace: Path
) -> list[Any]:
    """Import run ``run`` of ``path``, or every run; the daemon's results."""
    first = import_run(client, path, fmt, 0 if run is None else run, workspace)
    if run is not None:
        return [first]
    rest = [import_run(client, path, fmt, k, workspace) for k in range(1, int(first["runs"]))]
    return [first, *rest]


def store_via_daemon(home: Path, path: Path, fmt: str, run: int, workspace: Path) -> str:
    """Store one run as a session through the daemon (started if needed); its id."""
    client = DaemonClient.connect(home, start=True)
    try:
        return str(import_run(client, path, fmt, run, workspace)["sessionId"])
    finally:
        client.close()


def cmd_import(args: argparse.Namespace) -> int:
    """Import recorded sessions into the session store (through the daemon)."""
    workspace = Path(args.workspace).resolve() if args.workspace else Path.cwd()
    client = DaemonClient.connect(bonsai_home(), start=True)
    failed = 0
    try:
        for name in args.files:
            path = Path(name)
            try:
                results = import_file_runs(client, path, args.format, args.run, workspace)
            except ImportRefused as exc:
                failed += 1
                print(shown(f"bonsai import: {exc}"), file=sys.stderr)
                continue
            for result in results:
                _report(args, path, result)
    finally:
        client.close()
    return 1 if failed else 0


def _report(args: argparse.Namespace, path: Path, result: dict[str, Any]) -> None:
    if args.json:
        print(terminal_json({"source": str(path), **result, "via": "daemon"}))
        return
    print(
        f"imported {result['messages']} messages ({result['format']}, run {result['run'] + 1} "
        f"of {result['runs']}) as session {result['sessionId']}: "
        + shown(str(result["title"]), newlines=False)
    )
    for warning in result["warnings"]:
        print(shown(f"  note: {warning}", newlines=False))


def add_import_command(sub: Any, format_choices: tuple[str, ...]) -> Any:
    imp = sub.add_parser("import", help="import recorded agent sessions into the session store")
    imp.add_argument("files", metavar="FILE", nargs="+", help="the recordings to import")
    imp.add_argument(
        "--format",
        default="auto",
        choices=format_choices,
        help="the recordings' format (default: detected)",
    )
    imp.add_argument(
        "--run", type=int, default=None, metavar="K", help="only run K (0-based) of each file"
    )
    imp.add_argument("--workspace", metavar="DIR", help="workspace to file it under (default: cwd)")
    imp.add_argument("--json", action="store_true", help="one JSON line per imported session")
    return imp
