"""Request handlers: one small module per area. Importing this package registers them."""

from bonsai.daemon.handlers import (
    chat,
    config,
    ctx,
    daemon,
    episodes,
    memory,
    reflect,
    repomap,
    rules,
    session,
    tree,
)

__all__ = [
    "chat",
    "config",
    "ctx",
    "daemon",
    "episodes",
    "memory",
    "reflect",
    "repomap",
    "rules",
    "session",
    "tree",
]
