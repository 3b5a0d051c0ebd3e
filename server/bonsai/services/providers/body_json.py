"""A request body's JSON: compact, UTF-8, the same bytes ``json.dumps`` gives.

A turn encodes its whole request at every model step (~40k tokens of history is
~160 KB of JSON: 1.2–1.5 ms of the event loop with the standard library, about a
hundredth of that with orjson). orjson's bytes equal
``json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()`` for the plain
JSON types only: strings, integers within 64 bits, booleans, ``None``, lists,
tuples, dicts with string keys, and finite floats but those Python writes with an
exponent of -5 to -9 (``1e-05``, which orjson writes ``0.00001``; NaN and infinities
it writes ``null``). orjson also writes types the standard library refuses
(dataclasses, dates, enums). So a body is checked first, every node by its exact
type, and anything else goes through the standard library, as before; so does a
body orjson refuses (a lone surrogate, an integer past 64 bits), which fails or
succeeds exactly as it did. ``tests/providers/test_body_json.py`` holds the two
encoders to the same bytes.
"""

from __future__ import annotations

import json
import math
from typing import Any

import orjson

_LEAVES = frozenset({str, int, bool, type(None)})


def plain(value: Any) -> bool:
    """Whether ``value`` holds only what both encoders write alike, by exact type."""
    stack = [value]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in _LEAVES:
            continue
        if kind is float:
            if not _same_float(node):
                return False
            continue
        if kind is dict:
            for key, item in node.items():
                if type(key) is not str:
                    return False
                if type(item) not in _LEAVES:
                    stack.append(item)  # a float too: checked when popped
        elif kind is list or kind is tuple:
            stack.extend(item for item in node if type(item) not in _LEAVES)
        else:
            return False
    return True


def _same_float(value: float) -> bool:
    """Whether orjson writes this float as ``repr`` (and so ``json.dumps``) does."""
    return math.isfinite(value) and "e-0" not in repr(value)


def standard(body: Any) -> bytes:
    """The reference encoding (the standard library's)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def encode(body: Any) -> bytes:
    """Compact, deterministic JSON: identical requests give identical bytes."""
    if plain(body):
        try:
            return orjson.dumps(body)
        except TypeError:  # orjson refused it (a lone surrogate, a big integer, deep nesting)
            pass
    return standard(body)
