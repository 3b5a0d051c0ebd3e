"""Errors a user can act on, one class per JSON-RPC error code.

Any layer may raise these; the JSON-RPC layer maps them to error responses in
one place (``bonsai.daemon.rpc``). Anything else is an internal error: logged
with its traceback, answered with a short message.
"""

from __future__ import annotations


class BonsaiError(Exception):
    code = -32000

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidParams(BonsaiError):
    code = -32602


class NotFound(BonsaiError):
    """A session, node, episode or entry that does not exist (or no longer does)."""

    code = -32004


class Conflict(BonsaiError):
    """The request is valid but the state does not allow it now."""

    code = -32009


class Unauthorized(BonsaiError):
    code = -32001


class ConfigError(BonsaiError):
    """A configuration mistake the user fixes (a missing key, an unknown provider).

    The message says what is wrong and the fix, e.g. ``no API key for provider
    openai: export OPENAI_API_KEY or set providers.api_key in ~/.bonsai/config.json``."""

    code = -32010
