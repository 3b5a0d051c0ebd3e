"""A request body's bytes are the standard library's (``providers/body_json.py``):
orjson writes a body only where its bytes are certain to be
``json.dumps(body, ensure_ascii=False, separators=(",", ":"))``'s, and a body either
encoder would write otherwise (floats written apart, NaN, a big integer, a lone
surrogate, a type the standard library refuses) takes the standard library's way,
failing or not exactly as it did."""

from __future__ import annotations

import dataclasses
import enum
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bonsai.services.providers import body_json

LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()  # every code point, surrogates and control characters among them
    | st.sampled_from([1e-05, 3e-09, 1e-10, 1e16, 5e-324, -0.0, 0.1, "\x00\x1f\x7f\u2028"])
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=30,
)


def outcome(encode: Any, value: Any) -> tuple[str, bytes | None]:
    try:
        return ("ok", encode(value))
    except (TypeError, ValueError) as error:  # UnicodeEncodeError is a ValueError
        return (type(error).__name__, None)


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_every_value_encodes_to_the_standard_librarys_bytes_or_fails_as_it_does(
    value: Any,
) -> None:
    assert outcome(body_json.encode, value) == outcome(body_json.standard, value)


def test_a_body_of_plain_types_is_written_by_orjson_and_one_with_an_odd_float_is_not() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": 'é\n\t"x" \x01'}]}
    assert body_json.plain(body)
    assert not body_json.plain({**body, "temperature": 1e-05})  # orjson: 0.00001
    assert not body_json.plain({**body, "temperature": math.nan})  # orjson: null
    assert body_json.plain({**body, "temperature": 0.7})
    assert body_json.encode({**body, "temperature": 1e-05}).endswith(b'"temperature":1e-05}')


class Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int


@pytest.mark.parametrize("odd", [Colour.RED, Point(1), "\ud800"])
def test_what_the_standard_library_refuses_is_still_refused(odd: Any) -> None:
    name, _ = outcome(body_json.standard, {"messages": [odd]})
    assert name != "ok"
    assert outcome(body_json.encode, {"messages": [odd]}) == (name, None)


@pytest.mark.parametrize("odd", [{1: "an int key"}, {True: "a bool key"}, 2**64, -(2**70)])
def test_what_orjson_writes_otherwise_or_refuses_is_the_standard_librarys(odd: Any) -> None:
    body = {"messages": [odd]}
    assert not body_json.plain(body) or isinstance(odd, int)
    assert body_json.encode(body) == body_json.standard(body)
