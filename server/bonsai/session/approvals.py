"""Approvals as one shared object per tool call.

Every client attached to the session is asked; the first answer wins. Then
every client hears ``bonsai/approval/resolved`` (who answered, how, when), so
the others close their prompt at once; a late answer to the same approval is
ignored (the clients show it was answered elsewhere). A withdrawn approval (the
turn was cancelled, nobody answered in time) is resolved the same way.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from pathlib import Path
from typing import Any

from bonsai.agent.tools.files import proposed_text
from bonsai.protocol import models as m
from bonsai.session.host import Host, Subscriber

log = logging.getLogger("bonsai.approvals")
APPROVAL_TIMEOUT_S = 600.0
MAX_PROPOSED_CHARS = 1_000_000  # a diff editor for larger files is not worth the bytes


def who(connection: Subscriber) -> str:
    """A client in words: "VS Code window 3", "Neovim 4", "client 5"."""
    name = connection.name or "client"
    return f"{name} window {connection.id}" if name == "VS Code" else f"{name} {connection.id}"


def review(workspace: Path, tool: str, args: dict[str, Any]) -> dict[str, str]:
    """What a reviewer needs beside the diff: the file and its proposed text for an
    edit, the working directory for a command."""
    if tool == "bash":
        return {"cwd": str(workspace)}
    path = args.get("path")
    if tool not in ("edit_file", "write_file") or not isinstance(path, str):
        return {}
    try:
        after = proposed_text(workspace, tool, args)
    except Exception:  # outside the workspace, unreadable, no match: no review then
        return {}
    if after is None or len(after) > MAX_PROPOSED_CHARS:
        return {"path": path}
    return {"path": path, "proposed": after}


def _answer(future: asyncio.Future[Any]) -> bool | None:
    if future.cancelled() or future.exception() is not None:
        return None
    result = future.result()
    approved = result.get("approved") if isinstance(result, dict) else None
    return approved if isinstance(approved, bool) else None


def resolve(
    daemon: Host,
    params: m.ApprovalRequestParams,
    outcome: m.ApprovalOutcome,
    winner: Subscriber | None,
) -> None:
    """Tell every client of the session how the approval ended."""
    at = time.time()
    for client in daemon.subscribers(params.session_id):
        resolved = m.ApprovalResolvedParams(
            session_id=params.session_id,
            turn_id=params.turn_id,
            approval_id=params.approval_id or "",
            tool=params.tool,
            outcome=outcome,
            by=who(winner) if winner is not None else "",
            yours=client is winner,
            at=at,
        )
        client.notify("bonsai/approval/resolved", resolved)


async def ask_approval(
    daemon: Host,
    session_id: str,
    turn_id: str,
    tool: str,
    args: dict[str, Any],
    diff: str | None,
    workspace: Path,
    timeout_s: float = APPROVAL_TIMEOUT_S,
) -> bool:
    """Ask every attached client; the first answer wins; nobody able to answer → deny."""
    clients = daemon.subscribers(session_id)
    if not clients:
        return False
    params = m.ApprovalRequestParams(
        session_id=session_id,
        turn_id=turn_id,
        tool=tool,
        args=args,
        diff=diff,
        approval_id=uuid.uuid4().hex[:16],
        **review(workspace, tool, args),
    )
    asked = {
        asyncio.ensure_future(c.request("bonsai/approval/request", params, timeout_s)): c
        for c in clients
    }
    pending = set(asked)
    outcome: m.ApprovalOutcome = "unanswered"
    winner: Subscriber | None = None
    try:
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for future in done:
                approved = _answer(future)
                if approved is None:
                    if not future.cancelled() and isinstance(future.exception(), TimeoutError):
                        outcome = "expired"
                    continue
                outcome, winner = ("approved" if approved else "rejected"), asked[future]
                return approved
        return False
    except asyncio.CancelledError:
        outcome = "cancelled"
        raise
    finally:
        for future in pending:
            future.cancel()
        log.info("approval of %s in %s: %s", tool, session_id, outcome)
        resolve(daemon, params, outcome, winner)
