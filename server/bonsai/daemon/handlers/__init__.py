"""Request handlers: one small module per area. Importing this package registers them."""

from bonsai.daemon.handlers import config, daemon, session

__all__ = ["config", "daemon", "session"]
