"""A view's answer joined from fragments, each encoded once.

Most rows of a ledger are unchanged from the last view of its session (the
assembly memos hand back the same row object), so each row's JSON is kept by
identity and the answer is the small head (the view, the totals) with the rows'
bytes spliced in: byte for byte what encoding the whole result gives
(``tests/session/test_view_splice.py``). The wire view's messages are encoded
one by one the same way: no single encoding call holds the GIL for the whole
log while the loop waits to stream.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

import pydantic_core

from bonsai.protocol.models import Wire

T = TypeVar("T")
ROWS_KEPT = 8192  # encoded rows kept (a few sessions' ledgers)


def encode(model: Wire) -> bytes:
    """A wire model as the answer encodes it."""
    return model.model_dump_json(by_alias=True, exclude_none=True).encode("utf-8")


def encode_value(value: object) -> bytes:
    """A plain JSON value (a wire message, a tool) as a model's ``Any`` field encodes it."""
    return pydantic_core.to_json(value)


class KeptBytes(Generic[T]):
    """Object → its encoding, kept by identity for the ``limit`` objects encoded last
    (each entry holds its object, so an id is never reused while it is kept). The
    objects must be immutable: a frozen row encodes the same forever."""

    def __init__(self, encoder: Callable[[T], bytes], limit: int = ROWS_KEPT) -> None:
        self.encoder, self.limit = encoder, limit
        self._kept: OrderedDict[int, tuple[T, bytes]] = OrderedDict()
        self.encoded = 0  # how many encodings were made (tests and benches)

    def __call__(self, value: T) -> bytes:
        kept = self._kept.get(id(value))
        if kept is not None and kept[0] is value:
            self._kept.move_to_end(id(value))
            return kept[1]
        body = self.encoder(value)
        self.encoded += 1
        self._kept[id(value)] = (value, body)
        while len(self._kept) > self.limit:
            self._kept.popitem(last=False)
        return body


def joined(head: Wire, lists: Sequence[tuple[str, Sequence[bytes]]]) -> bytes:
    """``head`` encoded, with each ``(field, items)`` of ``lists`` as that list field.

    The listed fields must be unset in ``head`` and come after every field it sets,
    in the model's order: then the result is exactly ``encode`` of the whole model."""
    fields = type(head).model_fields
    order = {name: n for n, name in enumerate(fields)}
    last_set = max((order[f] for f in fields if getattr(head, f) is not None), default=-1)
    positions = [order[name] for name, _ in lists]
    if positions != sorted(set(positions)) or (positions and positions[0] <= last_set):
        names = [name for name, _ in lists]
        raise ValueError(f"{names} cannot follow the fields set in {type(head).__name__}")
    body = encode(head)
    if not lists:
        return body
    spliced = b",".join(
        b'"%s":[%s]' % ((fields[name].alias or name).encode(), b",".join(items))
        for name, items in lists
    )
    return body[:-1] + (b"," if last_set >= 0 else b"") + spliced + b"}"
