"""The handoff nudge (opt-in): past a fraction of the window, suggest a fresh
session and hand over a structured brief of where this one stands."""

from __future__ import annotations

from bonsai.core.context import Assembly
from bonsai.domain import StoredMessage
from bonsai.protocol import models as m
from bonsai.session.host import Host
from bonsai.session.steps.base import Built, TurnScope, TurnStep
from bonsai.settings import Settings

SUGGESTED_KEY = "handoff_suggested"


def handoff_brief(title: str, history: list[StoredMessage], todos: list[dict]) -> str:
    users = [
        s.message.content.strip()
        for s in history
        if s.message.role == "user" and s.message.name != "memory"
    ]
    files: list[str] = []
    for stored in history:
        evidence = stored.message.evidence
        if (
            evidence
            and evidence.path
            and evidence.kind in ("edit", "write")
            and (evidence.path not in files)
        ):
            files.append(evidence.path)
    open_tasks = [str(t.get("content", "")) for t in todos if t.get("status") != "completed"]
    lines = [
        f"# Handoff: {title}",
        "",
        "## Goal",
        users[0][:500] if users else "(none)",
        "",
        "## Latest request",
        users[-1][:500] if users else "(none)",
        "",
        "## Files changed",
        *([f"- {f}" for f in files] or ["- none"]),
        "",
        "## Open tasks",
        *([f"- {t}" for t in open_tasks] or ["- none recorded"]),
    ]
    return "\n".join(lines)


def maybe_suggest_handoff(
    daemon: Host,
    session_id: str,
    settings: Settings,
    assembly: Assembly,
    history: list[StoredMessage],
) -> bool:
    context = settings.context
    if not context.handoff_nudge:
        return False
    over = assembly.totals.percent >= context.handoff_fraction * 100
    already = bool(daemon.store.get_state(session_id, SUGGESTED_KEY, False))
    if not over:
        if already:
            daemon.store.set_state(session_id, SUGGESTED_KEY, False)
        return False
    if already:
        return False
    title = daemon.store.get(session_id).title
    todos = daemon.store.get_state(session_id, "todos", []) or []
    note = m.HandoffSuggestedParams(
        session_id=session_id,
        percent=round(assembly.totals.percent, 1),
        handoff=handoff_brief(title, history, todos),
    )
    daemon.broadcast(session_id, "bonsai/handoff/suggested", note)
    daemon.store.set_state(session_id, SUGGESTED_KEY, True)
    return True


class Handoff(TurnStep):
    """After a request past ``context.handoff_fraction``: suggest a fresh session."""

    def __init__(self, scope: TurnScope) -> None:
        self.scope = scope

    def after_request(self, built: Built) -> None:
        scope = self.scope
        maybe_suggest_handoff(
            scope.host, scope.session_id, scope.settings, built.assembly, built.history
        )
