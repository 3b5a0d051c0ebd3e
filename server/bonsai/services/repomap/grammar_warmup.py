"""Compile the tag queries of a repository's main languages before its first edit.

A language's tag query is compiled once per process, on the first file of that
language it parses (``tags.py``). A warm start parses nothing (the tags come
from the cache, the graph from its snapshot), so the first edit of a session
paid it: ~20 ms for Python, 30-120 ms for C, C++, Ruby or TypeScript, on top
of the edit itself. A long-lived service (the daemon's) compiles them once its
first map is made (``RepoMapService.get``, with ``heap.settle``), for every
language that a tenth of the repository's files are written in: the first
edit then costs what later ones do. The tags are those of an empty source, so
nothing else changes.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Iterable

from bonsai.services.repomap.languages import language_for_path
from bonsai.services.repomap.tags import GrammarUnavailable, extract_tags

MIN_SHARE = 0.10  # a language this share of the files are in is made ready


def main_languages(paths: Iterable[str], min_share: float = MIN_SHARE) -> list[str]:
    """The tag languages at least ``min_share`` of ``paths`` are in, the most
    used first (ties by name)."""
    suffixes = Counter(posixpath.splitext(posixpath.basename(p))[1].lower() for p in paths)
    total = sum(suffixes.values())
    per_language: Counter[str] = Counter()
    for suffix, count in suffixes.items():
        language = language_for_path("x" + suffix) if suffix else None
        if language is not None:
            per_language[language] += count
    wanted = [(-n, lang) for lang, n in per_language.items() if n >= min_share * total]
    return [lang for _, lang in sorted(wanted)]


def warm_languages(paths: Iterable[str]) -> list[str]:
    """Compile the tag query (and make this thread's parser) of each of the main
    languages of ``paths``; the languages made ready (a grammar that cannot be
    loaded here is skipped: ``languages.py`` logged why)."""
    ready: list[str] = []
    for language in main_languages(paths):
        try:
            extract_tags("", b"", language)
        except GrammarUnavailable:
            continue
        ready.append(language)
    return ready
