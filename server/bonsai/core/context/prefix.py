"""The hash of a request's cacheable prefix: cacheable system parts, tools and
the conversation before the tail. Equal hashes mean a byte-identical prefix;
a rewrite shows up as a hash change in its record. Messages enter through
their digests (``memo.message_digest``), so a cached digest is never re-hashed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from bonsai.core.context.pipeline_types import SystemPart

_SEP = b"\x1e"


def prefix_hash(
    system: list[SystemPart], tools: list[dict[str, Any]], digests: Iterable[bytes]
) -> str:
    return hash_on(prefix_head(system, tools), digests)


def hash_on(head: Any, digests: Iterable[bytes]) -> str:
    """The prefix hash from its head (``prefix_head``, consumed) and the messages' digests."""
    for message_digest in digests:
        head.update(message_digest)
    return str(head.hexdigest()[:16])


def prefix_head(system: list[SystemPart], tools: list[dict[str, Any]]) -> Any:
    """The hash over the cacheable system parts and the tools, before any message
    (``hashlib``'s object: ``copy()`` it to go on)."""
    digest = hashlib.sha256()
    for part in system:
        if part.cacheable:
            digest.update(part.text.encode("utf-8", "surrogatepass") + _SEP)
    digest.update(json.dumps(tools, sort_keys=True, ensure_ascii=False).encode() + _SEP)
    return digest
