"""Rendering ranked entries and fitting them to a token budget."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bonsai.core.repomap.render import MapEntry, MapTag, fit_entries, render_entries


def chars4(text: str) -> int:
    return (len(text) + 3) // 4


def words(text: str) -> int:
    return len(text.split())


def test_groups_by_path_sorted_tags_by_line_and_dedupes() -> None:
    entries = [
        MapEntry("b.py", MapTag(9, "def later():")),
        MapEntry("a.py", MapTag(3, "class A:")),
        MapEntry("b.py", MapTag(2, "def first():")),
        MapEntry("a.py", MapTag(5, "def method(self):", 1)),
        MapEntry("a.py", MapTag(3, "class A:")),
        MapEntry("notes.txt"),
    ]
    assert render_entries(entries) == (
        "a.py:\n│class A:\n│  def method(self):\nb.py:\n│def first():\n│def later():\nnotes.txt\n"
    )


def test_order_of_entries_does_not_change_bytes() -> None:
    entries = [MapEntry(f"f{i}.py", MapTag(i, f"def f{i}():")) for i in range(20)]
    assert render_entries(entries) == render_entries(list(reversed(entries)))


def test_long_lines_are_clipped() -> None:
    text = render_entries([MapEntry("x.py", MapTag(1, "def f(" + "a, " * 80 + "):"))])
    assert all(len(line) <= 100 for line in text.splitlines())
    assert text.splitlines()[1].endswith("…")


def _entries(n: int) -> list[MapEntry]:
    return [
        MapEntry(f"pkg/module_{i % 40:02d}.py", MapTag(i, f"def function_number_{i}(a, b, c):"))
        for i in range(n)
    ]


@pytest.mark.parametrize("budget", [256, 1024, 4096])
@pytest.mark.parametrize("counter", [chars4, words])
def test_fit_within_five_percent_below_budget(budget: int, counter) -> None:
    fitted = fit_entries(_entries(5000), budget, counter)
    assert fitted.tokens == counter(fitted.text)
    assert 0.95 * budget <= fitted.tokens <= budget
    # the next entry would have overflowed: the fit is the largest prefix
    assert counter(render_entries(_entries(5000)[: fitted.entries + 1])) > budget


def test_everything_fits_when_small() -> None:
    fitted = fit_entries(_entries(3), 10_000, chars4)
    assert fitted.entries == 3
    assert fitted.text == render_entries(_entries(3))


def test_zero_budget_and_no_entries_give_empty_text() -> None:
    assert fit_entries(_entries(10), 0, chars4).text == ""
    assert fit_entries([], 100, chars4).entries == 0


def test_fit_is_deterministic() -> None:
    a = fit_entries(_entries(3000), 1024, chars4)
    b = fit_entries(_entries(3000), 1024, chars4)
    assert a == b


_paths = st.sampled_from(["a.py", "b/c.py", "b/d.py", "notes.txt", "z" * 120 + ".py"])
_tags = st.one_of(
    st.none(),
    st.builds(
        MapTag,
        st.integers(1, 30),
        st.sampled_from(["def f():", "class A:", "def g(self, x):", "def " + "h" * 120 + "():"]),
        st.integers(0, 2),
    ),
)
_entry_lists = st.lists(st.builds(MapEntry, _paths, _tags), max_size=60)


def _plain_fit(entries: list[MapEntry], budget: int, order) -> tuple[str, int]:
    """The largest prefix whose plain rendering fits, found by trying every one."""
    best = ("", 0)
    for k in range(1, len(entries) + 1):
        text = render_entries(entries[:k], order)
        if chars4(text) <= budget:
            best = (text, k)
    return best


@settings(max_examples=300, deadline=None)
@given(_entry_lists, st.integers(1, 400), st.booleans())
def test_fit_renders_what_a_plain_render_of_its_prefix_gives(
    entries: list[MapEntry], budget: int, ranked: bool
) -> None:
    """The fit's probes share rendered file blocks; the text must still be, byte
    for byte, the plain rendering of the prefix it chose, and that prefix the
    largest that fits (the plain renderer's cost grows with the prefix)."""
    rank = {p: i for i, p in enumerate(sorted({e.path for e in entries}, reverse=True))}
    order = (lambda p: (rank[p], p)) if ranked else None
    fitted = fit_entries(entries, budget, chars4, order)
    assert fitted.text == render_entries(entries[: fitted.entries], order)
    assert fitted.tokens == chars4(fitted.text)
    assert (fitted.text, fitted.entries) == _plain_fit(entries, budget, order)
