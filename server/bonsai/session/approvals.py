"""Approvals as one shared object per tool call.

Every client attached to the session is asked, and each that attaches while it
waits (``ask_newcomer``: a window opened mid-turn); the first answer wins. Then
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
from dataclasses import dataclass, field
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


@dataclass
class OpenApproval:
    """An approval still waiting for its first answer: whom it asked so far."""

    params: m.ApprovalRequestParams
    deadline: float  # the event loop's time when nobody answering expires it
    asked: dict[asyncio.Future[Any], Subscriber] = field(default_factory=dict)
    joined: asyncio.Event = field(default_factory=asyncio.Event)

    def ask(self, client: Subscriber) -> None:
        """Put the question to ``client`` too (once), for the time the approval has left."""
        if any(asked is client for asked in self.asked.values()):
            return
        left = max(self.deadline - asyncio.get_running_loop().time(), 0.0)
        request = client.request("bonsai/approval/request", self.params, left)
        self.asked[asyncio.ensure_future(request)] = client
        self.joined.set()


def ask_newcomer(daemon: Host, session_id: str, client: Subscriber) -> None:
    """A client attached ``session_id``: it is asked every approval still waiting there."""
    for waiting in daemon.hub.approvals.get(session_id, []):
        waiting.ask(client)


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
    """Ask every attached client, and each that attaches while it waits; the first
    answer wins; nobody able to answer → deny."""
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
    waiting = OpenApproval(params, asyncio.get_running_loop().time() + timeout_s)
    for client in clients:
        waiting.ask(client)
    open_here = daemon.hub.approvals.setdefault(session_id, [])
    open_here.append(waiting)
    heard: set[asyncio.Future[Any]] = set()
    outcome: m.ApprovalOutcome = "unanswered"
    winner: Subscriber | None = None
    try:
        while pending := set(waiting.asked) - heard:
            waiting.joined.clear()
            joined = asyncio.ensure_future(waiting.joined.wait())
            try:
                done, _ = await asyncio.wait(
                    {*pending, joined}, return_when=asyncio.FIRST_COMPLETED
                )
            finally:
                joined.cancel()
            for future in done & pending:
                heard.add(future)
                approved = _answer(future)
                if approved is None:
                    if not future.cancelled() and isinstance(future.exception(), TimeoutError):
                        outcome = "expired"
                    continue
                outcome, winner = ("approved" if approved else "rejected"), waiting.asked[future]
                return approved
        return False
    except asyncio.CancelledError:
        outcome = "cancelled"
        raise
    finally:
        open_here.remove(waiting)
        if not open_here:
            daemon.hub.approvals.pop(session_id, None)
        for future in set(waiting.asked) - heard:
            future.cancel()
        log.info("approval of %s in %s: %s", tool, session_id, outcome)
        resolve(daemon, params, outcome, winner)
