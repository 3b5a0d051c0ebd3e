"""Query shaping: stop words, identifiers, safe FTS5 quoting, stemming."""

from __future__ import annotations

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bonsai.core.retrieval.query import fts_match_expression, indexable_text, quote_term
from bonsai.core.retrieval.text import content_terms, jaccard, stem, stemmed_set


def test_stop_words_are_dropped_and_content_kept_in_order() -> None:
    assert content_terms("How do I build the ponyc compiler again?") == [
        "build",
        "ponyc",
        "compiler",
    ]


def test_a_message_of_only_stop_words_searches_nothing() -> None:
    assert fts_match_expression("Thanks! Can you do that for me, please?") is None


def test_identifiers_contribute_their_parts() -> None:
    terms = content_terms("PixelRepresentation and float32_data")
    assert terms[:3] == ["pixelrepresentation", "pixel", "representation"]
    assert "float32" in terms and "data" in terms


def test_indexed_text_gains_a_line_of_identifier_parts() -> None:
    assert indexable_text("set TransferSyntaxUID first") == (
        "set TransferSyntaxUID first\ntransfer syntax uid"
    )
    assert indexable_text("plain words only") == "plain words only"


def test_quote_term_doubles_inner_quotes() -> None:
    assert quote_term('say "hi"') == '"say ""hi"""'


def test_operators_in_user_text_are_plain_terms() -> None:
    expression = fts_match_expression('NEAR(a b) OR title:* AND "xy" -z')
    assert expression == '"near" OR "title" OR "xy"'


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_any_user_text_gives_a_valid_match_expression(text: str) -> None:
    expression = fts_match_expression(text)
    if expression is None:
        return
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61')")
    conn.execute("INSERT INTO t(body) VALUES (?)", (text,))
    rows = conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", (expression,)).fetchall()
    assert rows[0][0] in (0, 1)


@pytest.mark.parametrize(
    ("word", "expected"),
    [("tests", "test"), ("running", "run"), ("locked", "lock"), ("classes", "class"),
     ("policies", "polici"), ("normalization", "normalize"), ("is", "is"), ("bus", "bus")],
)  # fmt: skip
def test_light_stemmer(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_jaccard_of_stemmed_sets() -> None:
    a = stemmed_set("Prefer ruff for formatting Python code")
    b = stemmed_set("prefers Ruff when formatting python")
    assert jaccard(a, b) == pytest.approx(4 / 5)
    assert jaccard([], []) == 0.0
