"""Long content served by size: as is, a verbatim excerpt, or a one-line pointer.

Counts come from bonsai's real counter (tiktoken o200k, offline), the one the
ledger uses, so "500, 2,000 and 10,000 tokens" are exact.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bonsai.core.history.pages import fetch_call, message_page
from bonsai.core.retrieval.long_content import GAP, Limits, Served, pieces, serve, tier_of
from bonsai.domain import Message, StoredMessage
from bonsai.services.tokens import TokenCounter, estimator_for
from bonsai.settings import ModelInfo, RetrievalSettings

QUESTION = "why did parse_config fail on the empty TOML file?"
NEEDLE = "ERROR parse_config: empty TOML document at settings/app.toml, expected a table\n"
SENTENCE = "The parse_config failure comes from the empty TOML file, which yields no table. "
FETCH = fetch_call("m_big")


@pytest.fixture(scope="module")
def counter(tmp_path_factory: pytest.TempPathFactory) -> TokenCounter:
    cache: Path = tmp_path_factory.mktemp("tiktoken")
    counter = estimator_for(
        ModelInfo(family="openai"), cache_dir=cache, tokenizer_path=None, model="gpt-4o"
    )
    assert counter.degraded_reason is None, "exact offline counts"
    return counter


def count_of(counter: TokenCounter):  # type: ignore[no-untyped-def]
    return lambda text: counter.count_text(text).tokens


def sized(counter: TokenCounter, tokens: int, *, needle_at: int | None = None) -> str:
    """A build log of exactly ``tokens`` tokens; ``NEEDLE`` at that line when asked."""
    lines: list[str] = []
    n = 0
    while counter.count_text("".join(lines)).tokens < tokens - 40:
        if n == needle_at:
            lines.append(NEEDLE)
        lines.append(f"step {n}: compiled module m{n} in {n % 97} ms, cache warm.\n")
        n += 1
    text = "".join(lines) + "done"
    while counter.count_text(text).tokens < tokens:
        text += " ok"
    assert counter.count_text(text).tokens == tokens
    return text


def served(counter: TokenCounter, text: str, limits: Limits | None = None) -> Served:
    return serve(
        text,
        what="tool result of bash",
        query=QUESTION,
        fetch=FETCH,
        count=count_of(counter),
        limits=limits or Limits(),
    )


def test_defaults_match_the_settings() -> None:
    settings = RetrievalSettings()
    assert (settings.excerpt_above_tokens, settings.pointer_above_tokens) == (800, 3_000)
    assert Limits() == Limits(settings.excerpt_above_tokens, settings.pointer_above_tokens)


@pytest.mark.parametrize(
    ("tokens", "tier"),
    [(800, "full"), (801, "excerpt"), (3_000, "excerpt"), (3_001, "pointer")],
)
def test_tier_boundaries_are_exact(counter: TokenCounter, tokens: int, tier: str) -> None:
    assert tier_of(tokens, Limits()) == tier
    assert served(counter, sized(counter, tokens)).tier == tier


def test_500_tokens_come_back_as_they_are(counter: TokenCounter) -> None:
    text = sized(counter, 500, needle_at=3)
    result = served(counter, text)
    assert (result.tier, result.tokens, result.text) == ("full", 500, text)


def test_2000_tokens_become_a_verbatim_excerpt_with_the_matching_lines(
    counter: TokenCounter,
) -> None:
    text = sized(counter, 2_000, needle_at=90)
    result = served(counter, text)
    assert result.tier == "excerpt"
    header, body = result.text.split("\n", 1)
    assert header.startswith("[excerpt, not the original:") and FETCH in header
    assert body.startswith("step 0: compiled module m0"), "the head comes first"
    assert NEEDLE in body, "the matching line, verbatim"
    assert counter.count_text(body).tokens <= 800 + 50, "an excerpt fits the full tier"
    for piece in body.split(GAP):
        assert piece.strip("\n") in text, "nothing is rewritten"


def test_an_excerpt_keeps_matching_sentences_of_long_lines(counter: TokenCounter) -> None:
    filler = "The build then linked every module and reported the timings once more. "
    paragraph = filler * 30 + SENTENCE + filler * 30
    text = "Summary of the investigation.\n" + (paragraph + "\n") * 2
    assert 800 < counter.count_text(text).tokens <= 3_000
    body = served(counter, text).text
    assert SENTENCE in body, "the sentence that matches, verbatim"
    assert len(body) < len(text) // 2


def test_10000_tokens_become_one_pointer_line(counter: TokenCounter) -> None:
    text = sized(counter, 10_000, needle_at=400)
    result = served(counter, text)
    assert result.tier == "pointer"
    assert "\n" not in result.text, "one line"
    lines = len(text.splitlines())
    assert f"tool result of bash: {lines} lines, about 10000 tokens" in result.text
    assert 'it begins "step 0: compiled module m0' in result.text
    assert "on line 401" in result.text, "where the question's words are"
    assert result.text.endswith(f"exact text: {FETCH}]")
    assert "ERROR" not in result.text, "no content beyond the first line"


def test_the_pointer_fetches_the_exact_original(counter: TokenCounter) -> None:
    text = sized(counter, 10_000, needle_at=400)
    stored = StoredMessage(
        message_id="m_big",
        session_id="s",
        seq=7,
        created_at=0.0,
        message=Message(role="tool", content=text, name="bash", tool_call_id="c1"),
    )
    lines = text.splitlines(keepends=True)
    cursor: int | None = 0
    rebuilt: list[str] = []
    while cursor is not None:
        page, following = message_page(stored, cursor)
        end = following if following is not None else len(lines)
        chunk = "".join(lines[cursor:end])
        assert chunk in page and f"lines {cursor + 1}-{end} of {len(lines)}" in page
        if following is not None:
            assert fetch_call("m_big", following) in page
        rebuilt.append(chunk)
        cursor = following
    assert len(rebuilt) > 1 and "".join(rebuilt) == text


def test_thresholds_are_settings(counter: TokenCounter) -> None:
    text = sized(counter, 2_000, needle_at=90)
    assert served(counter, text, Limits(5_000, 10_000)).text == text
    assert served(counter, text, Limits(100, 1_000)).tier == "pointer"


@pytest.mark.parametrize(
    "text",
    ["", "one line", "a\nb\n", "x" * 500 + ". " + "y" * 300 + "! z\n\nend", "no newline. at. all"],
)
def test_pieces_are_verbatim_slices(text: str) -> None:
    assert "".join(pieces(text)) == text
