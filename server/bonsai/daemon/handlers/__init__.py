"""Request handlers: one small module per area. Importing this package registers them."""

from bonsai.daemon.handlers import config, daemon, memory, session

__all__ = ["config", "daemon", "memory", "session"]
