"""Query shaping: from a user's sentence to a safe FTS5 ``MATCH`` expression."""

from __future__ import annotations

from bonsai.core.retrieval.morphology import variants
from bonsai.core.retrieval.text import STOP_WORDS, content_terms, expansion_terms

MAX_QUERY_TERMS = 32


def quote_term(term: str) -> str:
    """One FTS5 string literal: wrapped in double quotes, inner quotes doubled.

    A quoted string is always parsed as a phrase, so operators (``AND``,
    ``NEAR``, ``*``, ``:``, parentheses) inside user text lose their meaning."""
    return '"' + term.replace('"', '""') + '"'


def query_terms(text: str, max_terms: int = MAX_QUERY_TERMS) -> list[str]:
    """The content terms of a query, identifier parts included, then the other
    forms of its irregular words ("buy" also searches "bought"; see
    :mod:`bonsai.core.retrieval.morphology`), at most ``max_terms``."""
    terms = content_terms(text)[:max_terms]
    seen = set(terms)
    extra: list[str] = []
    for term in terms:
        for form in variants(term):
            if form not in seen and form not in STOP_WORDS:
                seen.add(form)
                extra.append(form)
    return (terms + extra)[:max_terms]


def fts_match_expression(text: str, max_terms: int = MAX_QUERY_TERMS) -> str | None:
    """An ``OR`` of quoted content terms, or ``None`` when nothing is left to search.

    ``OR`` keeps recall (BM25 still rewards documents matching more terms);
    stop words are removed first so they cannot pull in every document."""
    terms = query_terms(text, max_terms)
    if not terms:
        return None
    return " OR ".join(quote_term(t) for t in terms)


def indexable_text(text: str) -> str:
    """The text stored in the full-text index: the document plus the parts of
    its compound identifiers on a trailing line (so camelCase is searchable)."""
    extra = expansion_terms(text)
    if not extra:
        return text
    return text + "\n" + " ".join(extra)
