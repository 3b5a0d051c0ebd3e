"""Keep API keys out of every message we build from provider or transport text.

Providers sometimes echo the key they received (OpenAI's 401 does, masked or
not); transport errors may quote odd things. Every string that ends up in a
``ProviderError`` or a log line passes through :func:`redact` first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Key-shaped tokens even when they are not ours (a proxy may echo another key).
_KEY_SHAPED = re.compile(r"\b(sk|sk-ant|sk-proj|sk-or)-[A-Za-z0-9_\-*.]{6,}")
_MAX_LEN = 300


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Remove every secret (and anything key-shaped) from ``text`` and cap its length."""
    for secret in secrets:
        if len(secret) >= 4:
            text = text.replace(secret, "***")
    text = _KEY_SHAPED.sub("***", text)
    if len(text) > _MAX_LEN:
        text = text[:_MAX_LEN] + "…"
    return text
