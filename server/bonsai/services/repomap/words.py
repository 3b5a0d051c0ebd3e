"""The words of a file: what its text says, not only what it names.

An issue that describes behaviour ("the separability matrix of nested compound
models is wrong", "unexpected keyword in the error message") uses words that
are in the code's docstrings, comments, string literals (error and log
messages) and in the parts of its names, and in its path. ``file_words`` keeps
each distinct word of a source file once, lower-cased and reduced to a crude
stem (``matrices`` and ``matrix`` differ, ``models``/``model`` do not: the same
reduction runs on the issue's words, so only agreement matters). Identifiers
are split into their snake_case and camelCase parts, so ``separability_matrix``
gives ``separability`` and ``matrix``.

The words ride along with a file's tags (``FileTags.words``) into the graph
core, where ``lexical.py`` scores files against an issue's words (BM25 over
word presence).
"""

from __future__ import annotations

import re

MIN_LEN = 3
MAX_LEN = 30
MAX_WORDS = 4000  # distinct words kept per file (a generated table can hold far more)
_TOKEN = re.compile(rb"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_TEXT_TOKEN = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_STOP_TEXT = (
    "the and for are but not you all any can had her was one our out has his how its may new now"
    " old see two way who did get got let put say she too use def self cls none true false elif"
    " else try except finally pass import return yield lambda class with while break continue"
    " this that from what when which where there their then than into have been being were will"
    " would should could does done also only some such more most much many very just like each"
    " other here them they these those about after before because between both same"
    " str int var let const func"
)
STOP = frozenset(_STOP_TEXT.split())
_ENDINGS = (("ies", "y"), ("sses", "ss"), ("es", "e"), ("s", ""), ("ing", ""), ("ed", ""))


def stem(word: str) -> str:
    """Crude, symmetric reduction of a lower-case word (applied to both sides)."""
    for ending, repl in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            if ending == "s" and word.endswith(("ss", "us", "is")):
                return word
            return word[: -len(ending)] + repl
    return word


def _keep(word: str) -> bool:
    return MIN_LEN <= len(word) <= MAX_LEN and word not in STOP


def file_words(path: str, source: bytes) -> tuple[str, ...]:
    """The distinct stemmed words of ``source`` and ``path``, sorted (at most
    ``MAX_WORDS``, the shortest-sorted first: deterministic)."""
    tokens = {m.group() for m in _TOKEN.finditer(source)}  # no list of every token
    raw = {t.decode("ascii").lower() for t in tokens}
    raw.update(t.lower() for t in _TEXT_TOKEN.findall(path))
    words = sorted({stem(w) for w in raw if _keep(w)})
    if len(words) > MAX_WORDS:
        words = sorted(sorted(words, key=lambda w: (len(w), w))[:MAX_WORDS])
    return tuple(words)


def text_words(text: str) -> dict[str, int]:
    """An issue's stemmed words with their counts (the query side)."""
    counts: dict[str, int] = {}
    for token in _TEXT_TOKEN.findall(text):
        word = token.lower()
        if _keep(word):
            key = stem(word)
            counts[key] = counts.get(key, 0) + 1
    return counts
