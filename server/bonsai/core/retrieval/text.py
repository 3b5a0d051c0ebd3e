"""Text normalisation shared by query shaping, indexing and similarity.

Tokens follow SQLite's ``unicode61`` tokenizer closely (runs of letters and
digits; everything else separates), lower-cased. Identifiers written in
camelCase or with digits are additionally split into their parts so that
``PixelRepresentation`` can be found by "pixel representation".

The stemmer is a light suffix stripper in the spirit of Porter's step 1 and a
few common derivational endings. It is used where bonsai compares texts itself
(near-duplicate guard, query term de-duplication); full-text search relies on
FTS5's own ``porter`` tokenizer, which this stemmer agrees with on the common
inflections (plurals, -ing, -ed).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

_STOP_WORDS_TEXT = """
    a about above after again against all also am an and any are aren as at be
    because been before being below between both but by can cannot could couldn
    did didn do does doesn doing don down during each else ever every few for
    from further had hadn has hasn have haven having he her here hers herself him
    himself his how i if in into is isn it its itself just let me more most
    mustn my myself no nor not now of off on once only or other ought our ours
    ourselves out over own same shan she should shouldn so some such than that
    the their theirs them themselves then there these they this those through to
    too under until up upon very was wasn we were weren what when where which
    while who whom why will with won would wouldn you your yours yourself
    yourselves s t d ll m re ve
    again anything something thing things get got getting really please thanks
    tell remind remember recall know want wanted need needs kind sort way ways
    us
"""

STOP_WORDS: frozenset[str] = frozenset(_STOP_WORDS_TEXT.split())

_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("ational", "ate"),
    ("ization", "ize"),
    ("fulness", "ful"),
    ("iveness", "ive"),
    ("ousness", "ous"),
    ("sses", "ss"),
    ("ies", "i"),
    ("ement", ""),
    ("ments", ""),
    ("ment", ""),
    ("ingly", ""),
    ("edly", ""),
    ("ing", ""),
    ("ed", ""),
    ("ly", ""),
    ("s", ""),
)


def words(text: str) -> list[str]:
    """Lower-cased ``unicode61``-style tokens, in order, duplicates kept."""
    return [w.lower() for w in _WORD.findall(text)]


def identifier_parts(token: str) -> list[str]:
    """Parts of a camelCase / digit-bearing identifier; [] when it has none."""
    parts = _CAMEL.findall(token)
    if len(parts) < 2:
        return []
    return [p.lower() for p in parts]


def expansion_terms(text: str) -> list[str]:
    """Extra terms to index for ``text``: the parts of its compound identifiers."""
    extra: list[str] = []
    for raw in _WORD.findall(text):
        extra.extend(identifier_parts(raw))
    return extra


def stem(word: str) -> str:
    """Strip one common English suffix, keeping a stem of at least three letters."""
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix):
            base = word[: len(word) - len(suffix)] + replacement
            if len(base) >= 3 and not (suffix == "s" and word.endswith("ss")):
                return _undouble(base) if suffix in ("ing", "ed") else base
            return word
    return word


def _undouble(base: str) -> str:
    if len(base) >= 4 and base[-1] == base[-2] and base[-1] not in "lsz":
        return base[:-1]
    return base


def content_terms(text: str, *, expand: bool = True) -> list[str]:
    """Content words of ``text`` in first-seen order, de-duplicated.

    Stop words, one-letter tokens and pure punctuation are dropped; compound
    identifiers contribute their parts too when ``expand`` is true."""
    seen: set[str] = set()
    out: list[str] = []
    for raw in _WORD.findall(text):
        candidates = [raw.lower()]
        if expand:
            candidates.extend(identifier_parts(raw))
        for term in candidates:
            if _is_content(term) and term not in seen:
                seen.add(term)
                out.append(term)
    return out


def _is_content(term: str) -> bool:
    if term in STOP_WORDS:
        return False
    return len(term) >= 2 or term.isdigit()


def stemmed_set(text: str, *, expand: bool = False) -> frozenset[str]:
    """The set of stemmed content terms of ``text`` (for set similarity)."""
    return frozenset(stem(t) for t in content_terms(text, expand=expand))


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    """Jaccard similarity of two term collections (0.0 when both are empty)."""
    sa, sb = set(a), set(b)
    union = sa | sb
    if not union:
        return 0.0
    return len(sa & sb) / len(union)


def shared_stems(query: str, text: str) -> int:
    """How many distinct stemmed content terms of ``query`` occur in ``text``."""
    return len(stemmed_set(query, expand=True) & stemmed_set(text, expand=True))
