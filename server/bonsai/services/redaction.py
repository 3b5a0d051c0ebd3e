"""The daemon's own secrets: the registry of configured key values, and redaction with them.

Pattern rules live in ``core.redaction`` (pure). This module adds what only the
running daemon knows: the values of the provider keys it was configured with,
from the environment or the config file, so they are removed by value whatever
their shape. Providers register the key they resolve; the daemon registers the
environment's keys at start.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from bonsai.core.redaction import MIN_SECRET_CHARS, Redaction
from bonsai.core.redaction import redact as redact_with

if TYPE_CHECKING:  # providers.types imports this module (errors are redacted there)
    from bonsai.services.providers.types import ChatRequest

# every variable a provider reads its key from (services/providers/factory.KEY_ENV and friends)
KEY_VARIABLES = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENAI_COMPATIBLE_API_KEY",
    "BONSAI_API_KEY",
)

_lock = threading.Lock()
_keys: frozenset[str] = frozenset()


def register(*values: str | None) -> None:
    """Remember key values to remove from every text that leaves the daemon."""
    global _keys
    fresh = {v.strip() for v in values if v and len(v.strip()) >= MIN_SECRET_CHARS}
    if fresh - _keys:
        with _lock:
            _keys = _keys | fresh


def register_environment(env: Mapping[str, str]) -> None:
    register(*(env.get(name) for name in KEY_VARIABLES))


def known() -> frozenset[str]:
    return _keys


def redact(text: str, extra: Iterable[str] = (), *, assignments: bool = True) -> Redaction:
    """``text`` with patterns and the daemon's own keys (plus ``extra``) redacted;
    ``assignments`` False skips the ``name = value`` rule (for bonsai's own prose)."""
    return redact_with(text, (*_keys, *extra), assignments=assignments)


def redact_text(text: str) -> str:
    return redact(text).text


def redact_value(value: Any) -> Any:
    """Strings anywhere in a JSON-like value, redacted (containers rebuilt only when changed)."""
    if isinstance(value, str):
        return redact(value).text
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    return value


def scrubbed_environment(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without the provider keys: every variable that names one, and every
    variable whose value holds a configured key."""
    keys = known() | {env[n] for n in KEY_VARIABLES if env.get(n)}
    return {
        name: value
        for name, value in env.items()
        if name not in KEY_VARIABLES
        and not any(key in value for key in keys if len(key) >= MIN_SECRET_CHARS)
    }


class RedactingFilter(logging.Filter):
    """Redacts every log record (message, arguments and traceback) before a handler writes it."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info:
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_text = redact_text(text)
            record.exc_info = None
        elif record.exc_text:
            record.exc_text = redact_text(record.exc_text)
        if record.stack_info:
            record.stack_info = redact_text(record.stack_info)
        record.msg, record.args = redact_text(message), None
        return True


MAX_ERROR_CHARS = 300


def redact_error(text: str, secrets: Iterable[str] = ()) -> str:
    """A provider or transport message for users: redacted on the full text first,
    then capped (so a cut can never leave part of a key behind)."""
    text = redact(text, secrets).text
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS] + "…"


@functools.lru_cache(maxsize=2048)
def _cached(text: str, keys: frozenset[str]) -> str:
    return redact_with(text, keys).text


def redact_request(request: ChatRequest) -> ChatRequest:
    """The request with secrets removed from every system block and message text:
    the last check before anything is sent. Deterministic, so the cacheable prefix
    stays byte-identical; texts already clean come back as the same objects."""
    keys = _keys
    system = [
        block
        if (clean := _cached(block.text, keys)) == block.text
        else block.model_copy(update={"text": clean})
        for block in request.system
    ]
    messages = [
        message
        if (clean := _cached(message.content, keys)) == message.content
        else message.model_copy(update={"content": clean})
        for message in request.messages
    ]
    return request.model_copy(update={"system": system, "messages": messages})
