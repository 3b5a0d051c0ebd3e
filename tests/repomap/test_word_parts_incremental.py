"""Adding names to the word-part cache equals building it fresh, whatever the order."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bonsai.services.repomap.mentions import WordParts, name_parts

PARTS = ["cart", "total", "http", "connection", "parse", "default", "item", "count"]
_part = st.sampled_from(PARTS)
_name = st.one_of(
    st.lists(_part, min_size=1, max_size=3).map("_".join),
    st.lists(_part, min_size=1, max_size=3).map(lambda ps: "".join(p.title() for p in ps)),
    st.text("abcdefghij_XYZ", min_size=1, max_size=12),
)
_step = st.one_of(
    st.tuples(st.just("add"), st.lists(_name, max_size=5)),
    st.tuples(st.just("ask"), st.sampled_from([*PARTS, "abcd", "xyz"])),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(_name, max_size=8), st.lists(_step, max_size=12))
def test_incremental_adds_equal_a_fresh_build(first: list[str], steps: list[tuple]) -> None:
    parts = WordParts(first)
    names = list(first)
    for kind, value in steps:
        if kind == "add":
            parts.add(value)
            names.extend(value)
        else:
            assert parts.containing(value) == WordParts(names).containing(value)
    for part in [*PARTS, "abcd"]:
        expected = {n for n in names if part in name_parts(n)}
        assert parts.containing(part) == expected
