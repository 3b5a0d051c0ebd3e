"""``bonsai/tree/changed``: tell a session's clients that its tree changed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bonsai.protocol import models as m

if TYPE_CHECKING:
    from bonsai.daemon.state import Daemon


def tree_changed(daemon: Daemon, session_id: str, op: str) -> None:
    """Every recorded tree op (fork, jump, reparent, hide, restore, attach) calls this."""
    daemon.broadcast(
        session_id, "bonsai/tree/changed", m.TreeChangedParams(session_id=session_id, op=op)
    )
