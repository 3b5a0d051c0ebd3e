"""``bonsai chat`` and ``bonsai ctx``: terminal clients of the shared daemon."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bonsai.cli.client import DaemonClient, RpcError
from bonsai.cli.ctx_table import print_ledger
from bonsai.cli.render import TurnPrinter
from bonsai.home import bonsai_home


def pick_session(client: DaemonClient, session: str | None, workspace: Path, create: bool) -> str:
    if session:
        return session
    sessions = client.request("bonsai/session/list", {"workspace": str(workspace)})["sessions"]
    if sessions:
        return str(sessions[0]["sessionId"])
    if not create:
        raise RpcError(-32004, f"no session for {workspace}; start one with `bonsai chat`")
    created = client.request("bonsai/session/create", {"workspace": str(workspace)})
    return str(created["sessionId"])


def _ask(printer: TurnPrinter, params: dict[str, Any], auto: bool) -> dict[str, bool]:
    if auto:
        return printer.approval(params, approve=True)
    if not sys.stdin.isatty():
        return printer.approval(params, approve=False)
    if params.get("diff"):
        print(params["diff"])
    answer = input(f"approve {params.get('tool')}? [y/N] ").strip().lower()
    return {"approved": answer in ("y", "yes")}


def chat_command(args: argparse.Namespace) -> int:
    workspace = Path(args.workspace).resolve()
    printer = TurnPrinter()
    client = DaemonClient.connect(bonsai_home())
    try:
        session_id = pick_session(client, args.session, workspace, create=True)
        client.on_notification = lambda method, params: (
            printer.event(params) if method == "bonsai/chat/event" else None
        )
        client.on_request = lambda method, params: _ask(printer, params, args.yes)
        client.request("bonsai/session/attach", {"sessionId": session_id})
        sent = client.request("bonsai/chat/send", {"sessionId": session_id, "text": args.message})
        while sent["turnId"] not in printer.finished:
            client.pump()
        print(f"(session {session_id})", file=sys.stderr)
        return 0 if printer.finished[sent["turnId"]] == "done" else 1
    except RpcError as error:
        print(f"bonsai chat: {error}", file=sys.stderr)
        return 1
    finally:
        client.close()


def ctx_command(args: argparse.Namespace) -> int:
    client = DaemonClient.connect(bonsai_home())
    try:
        session_id = pick_session(client, args.session, Path(args.workspace).resolve(), False)
        view = "turns" if args.events_jsonl else args.view
        result = client.request("bonsai/ctx/get", {"sessionId": session_id, "view": view})
    except RpcError as error:
        print(f"bonsai ctx: {error}", file=sys.stderr)
        return 1
    finally:
        client.close()
    if args.events_jsonl:
        return _export_events(client_result=result, session_id=session_id, path=args.events_jsonl)
    if args.json:
        print(json.dumps(result, indent=2))
    elif args.view == "wire":
        print(json.dumps({k: result.get(k) for k in ("system", "messages", "tools")}, indent=2))
    else:
        print_ledger(result)
    return 0


def _export_events(client_result: dict[str, Any], session_id: str, path: str) -> int:
    """Every compaction/eviction event, one JSON object a line, for analysis."""
    count = 0
    with open(path, "w", encoding="utf-8") as out:
        for turn in client_result.get("turns") or []:
            for event in turn.get("events", []):
                out.write(
                    json.dumps({"sessionId": session_id, "turn": turn["turn"], **event}) + "\n"
                )
                count += 1
    print(f"wrote {count} events to {path}", file=sys.stderr)
    return 0


def add_chat_commands(sub: Any) -> None:
    chat = sub.add_parser("chat", help="send a message and stream the agent's reply")
    chat.add_argument("message")
    chat.add_argument("--session", help="session id (default: latest for the workspace)")
    chat.add_argument("--workspace", default=".", help="workspace directory (default: .)")
    chat.add_argument("--yes", action="store_true", help="approve edits and commands")
    chat.set_defaults(func=chat_command)

    ctx = sub.add_parser("ctx", help="show where the context window goes")
    ctx.add_argument("--session", help="session id (default: latest for the workspace)")
    ctx.add_argument("--workspace", default=".")
    ctx.add_argument("--view", choices=["ledger", "wire", "turns"], default="ledger")
    ctx.add_argument("--json", action="store_true")
    ctx.add_argument(
        "--events-jsonl",
        metavar="FILE",
        help="export the telemetry of every "
        "compaction and eviction (tokens and prefix hashes before/after) as JSON lines",
    )
    ctx.set_defaults(func=ctx_command)
