"""``bonsai/tree/changed``: tell a session's clients that its tree changed."""

from __future__ import annotations

from bonsai.protocol import models as m
from bonsai.session.host import Host


def tree_changed(daemon: Host, session_id: str, op: str) -> None:
    """Every recorded tree op (fork, jump, reparent, hide, restore, attach) calls this."""
    daemon.broadcast(
        session_id, "bonsai/tree/changed", m.TreeChangedParams(session_id=session_id, op=op)
    )
