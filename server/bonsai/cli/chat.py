"""``bonsai chat`` and ``bonsai ctx``: terminal clients of the shared daemon."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from bonsai.cli.client import DaemonClient, RpcError
from bonsai.cli.client_settings import from_environment, settings_problems, start_only_notes
from bonsai.cli.ctx_table import print_ledger
from bonsai.cli.terminal_text import shown
from bonsai.errors import ConfigError, NotFound
from bonsai.home import bonsai_home
from bonsai.services.workspace import workspace_problem

CONFIG_ERROR = ConfigError.code
INTERRUPTED = 130  # what a shell reports for a command ended by Ctrl-C (128 + SIGINT)


def pick_session(
    client: DaemonClient,
    session: str | None,
    workspace: Path,
    create: bool,
    settings: dict[str, Any] | None = None,
) -> tuple[str, bool]:
    """The session to use and whether it was created just now (with ``settings``)."""
    if session:
        return session, False
    sessions = client.request("bonsai/session/list", {"workspace": str(workspace)})["sessions"]
    if sessions:
        return str(sessions[0]["sessionId"]), False
    if not create:
        raise RpcError(NotFound.code, f"no session for {workspace}; start one with `bonsai chat`")
    params: dict[str, Any] = {"workspace": str(workspace)}
    if settings is not None:
        params["client"] = settings
    created = client.request("bonsai/session/create", params)
    return str(created["sessionId"]), True


def connect(command: str, *, start: bool = True) -> DaemonClient:
    """Connect to the user's daemon; say so on stderr when this command starts it."""
    home = bonsai_home()
    client = DaemonClient.connect(home, start=start)
    if client.started:
        pid = client.request("bonsai/daemon/status").get("pid")
        print(
            f"{command}: no daemon was running; started one (pid {pid}, home {home})",
            file=sys.stderr,
        )
    return client


def chat_command(args: argparse.Namespace) -> int:
    from bonsai.cli.interact import ClientRequests, notifications  # not needed by `ctx`
    from bonsai.cli.render import TurnPrinter
    from bonsai.cli.silence import SilenceWatch

    workspace = Path(args.workspace).resolve()
    what = workspace_problem(workspace)
    if what is not None:  # a session there could read, list or run nothing
        print(
            f"bonsai chat: the workspace {workspace} {what}; run it in your project "
            "or pass --workspace DIR",
            file=sys.stderr,
        )
        return 2
    printer = TurnPrinter()
    try:
        client = connect("bonsai chat")
    except KeyboardInterrupt:
        print("bonsai chat: interrupted before the message was sent", file=sys.stderr)
        return INTERRUPTED
    created = None
    session_id: str | None = None
    turn_id: str | None = None
    try:
        if not client.started:
            status = client.request("bonsai/daemon/status")
            for note in start_only_notes(status):
                print(note, file=sys.stderr)
        for problem in settings_problems(client, str(workspace), "bonsai chat"):
            print(problem, file=sys.stderr)
        settings = from_environment("bonsai chat")
        session_id, fresh = pick_session(client, args.session, workspace, True, settings)
        created = session_id if fresh else None
        watch = SilenceWatch(printer)
        shown_events = notifications(printer)

        def on_notification(method: str, params: dict[str, Any]) -> None:
            watch.heard()
            shown_events(method, params)

        client.on_notification = on_notification
        client.on_request = watch.asking(ClientRequests(printer, auto=args.yes))
        client.request("bonsai/session/attach", {"sessionId": session_id})
        sent = client.request(
            "bonsai/chat/send", {"sessionId": session_id, "text": args.message, "client": settings}
        )
        created = None  # the turn runs: the session is the user's now
        turn_id = str(sent["turnId"])
        watch.heard()
        with watch:
            while turn_id not in printer.finished:
                client.pump()
        print(f"(session {session_id})", file=sys.stderr)
        return 0 if printer.finished[turn_id] == "done" else 1
    except RpcError as error:
        print(shown(f"bonsai chat: {error}"), file=sys.stderr)
        return 2 if error.code == CONFIG_ERROR else 1
    except KeyboardInterrupt:
        client.on_notification = None  # the turn's own "cancelled" error: said here once
        printer.end_line()
        print(cancelled(session_id, turn_id), file=sys.stderr)
        return INTERRUPTED
    except (ConnectionError, OSError) as error:
        printer.end_line()
        print(daemon_lost(error, session_id, turn_id), file=sys.stderr)
        created = None  # the daemon that made it is gone: nothing to delete it with
        return 1
    finally:
        if created is not None:  # a chat that failed before its first step leaves no session
            with contextlib.suppress(RpcError, OSError, ConnectionError):
                client.request("bonsai/session/delete", {"sessionId": created})
        client.close()


def cancelled(session_id: str | None, turn_id: str | None) -> str:
    """Ctrl-C: cancel the turn (over a connection of its own: the interrupted one may
    be mid-frame) and the line that says what happened."""
    if session_id is None or turn_id is None:
        return "bonsai chat: interrupted before the message was sent"
    try:
        with contextlib.closing(DaemonClient.connect(bonsai_home(), start=False)) as other:
            params = {"sessionId": session_id, "turnId": turn_id}
            other.request("bonsai/chat/cancel", params)
    except (RpcError, OSError, ConnectionError, KeyboardInterrupt):
        return (
            f"bonsai chat: interrupted, but the turn could not be cancelled: it may still "
            f"run (session {session_id})"
        )
    return f"bonsai chat: cancelled; the reply so far is kept as interrupted (session {session_id})"


def daemon_lost(error: Exception, session_id: str | None, turn_id: str | None) -> str:
    """The daemon went away under a running command: what was lost, where to look."""
    log = bonsai_home() / "logs" / "daemon.log"
    during = "during the turn" if turn_id is not None else "before the turn started"
    kept = "; the reply so far is kept as interrupted" if turn_id is not None else ""
    where = f" (session {session_id})" if session_id is not None else ""
    return shown(
        f"bonsai chat: lost the daemon {during} ({error}){kept}{where}; its log is {log}, "
        "and the next bonsai command starts a new daemon"
    )


def ctx_command(args: argparse.Namespace) -> int:
    client = connect("bonsai ctx")
    try:
        session_id, _ = pick_session(client, args.session, Path(args.workspace).resolve(), False)
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
    chat.add_argument("message", help="what to ask the agent (quote it)")
    chat.add_argument("--session", help="session id (default: latest for the workspace)")
    chat.add_argument("--workspace", default=".", help="workspace directory (default: .)")
    chat.add_argument("--yes", action="store_true", help="approve edits and commands")
    chat.set_defaults(func=chat_command)

    ctx = sub.add_parser("ctx", help="show where the context window goes")
    ctx.add_argument("--session", help="session id (default: latest for the workspace)")
    ctx.add_argument(
        "--workspace", default=".", help="workspace whose latest session to show (default: .)"
    )
    ctx.add_argument(
        "--view",
        choices=["ledger", "wire", "turns"],
        default="ledger",
        help="ledger: node by node (default); wire: the exact request; turns: per-turn usage",
    )
    ctx.add_argument("--json", action="store_true", help="print the daemon's answer as JSON")
    ctx.add_argument(
        "--events-jsonl",
        metavar="FILE",
        help="export the telemetry of every "
        "compaction and eviction (tokens and prefix hashes before/after) as JSON lines",
    )
    ctx.set_defaults(func=ctx_command)
