"""A first map from the files that matter most, while a cold build parses the rest.

A cold build of a large repository parses every file before its first map;
``priority_files`` picks, before anything is parsed, the few files the map is
most likely to show: the files of the chat and the files the task text names
first, then up to half by what the text says (its words in the files' paths,
the names it writes that a file defines, its rarest words in a file's text:
``first_scan.py``, fused by reciprocal rank as the full map fuses its lanes),
then the files most imported by the others (the module name of a file, counted
over the import lines at the head of every file: cheap, no parse).
The indexer parses those first and hands their tags to ``first_map``, which
ranks and renders them exactly as a full map is (same ranking, same render)
while the remaining files parse. The service's state is untouched by this: the
map after the build completes is the map a build without a first map gives.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from bonsai.core.repomap.render import fit_entries
from bonsai.services.repomap.cache import CachedFile
from bonsai.services.repomap.discovery import Candidate
from bonsai.services.repomap.first_scan import (
    HEAD_BYTES,
    SourceScan,
    definition_scores,
    ranked,
    read_sources,
    word_scores,
)
from bonsai.services.repomap.graph import build_graph
from bonsai.services.repomap.indexer import FirstPass
from bonsai.services.repomap.indexer_core import FileResult
from bonsai.services.repomap.issue_text import without_dumps
from bonsai.services.repomap.languages import language_for_path
from bonsai.services.repomap.lexical import is_test_path
from bonsai.services.repomap.map_state import entry_rows, map_files
from bonsai.services.repomap.mentions import (
    WordParts,
    build_path_index,
    mentioned_files,
    parse_mentions,
)
from bonsai.services.repomap.ranking import rank
from bonsai.services.repomap.records import FileTags, RepoMap
from bonsai.services.repomap.words import path_words, text_words

log = logging.getLogger(__name__)

FIRST_MIN_FILES = 200  # a cold build of fewer files gives its whole map as soon
FIRST_SHARE = 10  # one file in this many is parsed for the first map ...
FIRST_MIN, FIRST_MAX = 32, 256  # ... but at least / at most this many
RRF_K = 10.0  # the choice's lanes fused as ``fusion.py`` fuses the map's
W_PATH, W_DEFINES, W_WORDS = 1.0, 1.0, 1.0
_IMPORT_LINE = re.compile(  # after a newline: twice as fast as a multi-line ``^``
    rb"\n[ \t]*(?:from|import|export|#[ \t]*include|require|use|using|load|package)\b[^\n]*"
)
_IMPORT_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_PACKAGE_FILES = frozenset({"__init__", "index", "mod", "main", "lib"})


class FirstRequest(NamedTuple):
    """What the first map is for (as ``RepoMapService.get`` takes it) and who
    receives it; ``on_map`` runs on the building thread, before the build ends."""

    on_map: Callable[[RepoMap], None]
    chat_files: Collection[str] = ()
    mentions: str = ""
    tokens: int | None = None


def first_count(pending: int) -> int:
    """How many files the first map is made of, for ``pending`` files to parse
    (0: no first map, the whole build is quick enough)."""
    if pending < FIRST_MIN_FILES:
        return 0
    return max(FIRST_MIN, min(FIRST_MAX, pending // FIRST_SHARE))


def module_key(path: str) -> str:
    """The name other files import ``path`` by: its file name without the
    extension, or its directory's name for a package file (``__init__.py``)."""
    parts = path.split("/")
    stem = parts[-1].split(".", 1)[0]
    if stem in _PACKAGE_FILES and len(parts) > 1:
        return parts[-2]
    return stem


def import_counts(heads: Mapping[str, bytes]) -> dict[str, int]:
    """Per module name, how many of the files (path -> the bytes of its head)
    name it on an import line near their head (a file counts once per name)."""
    counts: dict[bytes, int] = {}
    get = counts.get
    for head in heads.values():
        lines = b"".join(_IMPORT_LINE.findall(b"\n" + head[:HEAD_BYTES]))
        for word in set(_IMPORT_WORD.findall(lines)):
            counts[word] = get(word, 0) + 1
    return {word.decode("ascii"): n for word, n in counts.items()}


def priority_files(
    root: Path,
    candidates: Sequence[Candidate],
    count: int,
    chat_files: Collection[str] = (),
    mentions: str = "",
) -> list[str]:
    """The ``count`` files of ``candidates`` to parse first: those of the chat,
    then those the text names, then up to half of ``count`` by what the text
    says (``text_lanes``), then the source files most imported by the others
    (ties: by path)."""
    paths = [c.path for c in candidates]
    known = set(paths)
    named = [p for p in sorted(chat_files) if p in known]
    said = bool(mentions.strip())
    if said:
        found = mentioned_files(mentions, build_path_index(paths))
        named += sorted(p for p in found if p in known and p not in named)
    code = [p for p in paths if language_for_path(p) is not None]  # the others have no tags
    sources = read_sources(root, code, [said and not is_test_path(p) for p in code])
    chosen = dict.fromkeys(named)
    for path in text_lanes(code, sources.scan, mentions)[: count // 2]:
        chosen.setdefault(path)
    counts = import_counts(sources.heads)
    ranked = sorted(
        (p for p in code if p not in chosen), key=lambda p: (-counts.get(module_key(p), 0), p)
    )
    return (list(chosen) + ranked)[: max(count, len(named))]


def text_lanes(code: Sequence[str], scan: SourceScan, text: str) -> list[str]:
    """The files the text speaks of, best first: its words in their paths
    (``path_matches``), the names it writes that they define and its rarest
    words in their text (``first_scan``), fused by reciprocal rank
    (``sum(weight / (RRF_K + position))``, ties by path)."""
    if not text.strip():
        return []
    lanes = (
        (W_PATH, lambda: path_matches(code, text)),
        (W_DEFINES, lambda: ranked(definition_scores(scan, text))),
        (W_WORDS, lambda: ranked(word_scores(scan, text))),
    )
    fused: dict[str, float] = {}
    for weight, lane in lanes:
        if weight <= 0:
            continue
        for position, path in enumerate(lane(), 1):
            fused[path] = fused.get(path, 0.0) + weight / (RRF_K + position)
    return sorted(fused, key=lambda p: (-fused[p], p))


def path_matches(paths: Sequence[str], text: str) -> list[str]:
    """The files whose path shares a word with ``text``, best first: each shared
    (stemmed) word scores ``log(1 + files / files whose path has it)``; ties by
    path. An issue about "the migration autodetector" is most often about
    ``migrations/autodetector.py``: a file's path says what it is about before
    it is parsed."""
    asked = text_words(text) if text.strip() else {}
    if not asked:
        return []
    words = {p: path_words(p) & asked.keys() for p in paths}
    seen: dict[str, int] = {}
    for found in words.values():
        for word in found:
            seen[word] = seen.get(word, 0) + 1
    total = len(paths)
    scores = {p: sum(math.log(1 + total / seen[w]) for w in found) for p, found in words.items()}
    return sorted((p for p, s in scores.items() if s > 0), key=lambda p: (-scores[p], p))


def first_map(
    tags: Mapping[str, FileTags],
    request: FirstRequest,
    budget: int,
    count_tokens: Callable[[str], int],
) -> RepoMap:
    """The map of ``tags`` alone for ``request``: ranked and rendered as
    ``RepoMapService.get`` renders a map from scratch."""
    started = time.perf_counter()
    graph = build_graph(tags)
    chat = frozenset(p for p in request.chat_files if p in tags)
    text = request.mentions
    if text.strip():
        found = parse_mentions(
            text, build_path_index(graph.files), graph.defined, WordParts(graph.core.names)
        )
    else:
        found = parse_mentions("", build_path_index(()), graph.defined)
    ranked = rank(graph, chat, frozenset(), found, text, entry_rows(budget))
    rank_of = dict(zip(graph.files, ranked.file_rank.tolist(), strict=True))
    entries = ranked.entries(entry_rows(budget))
    fitted = fit_entries(entries, budget, count_tokens, lambda p: (-rank_of[p], p))
    return RepoMap(
        text=fitted.text,
        files=map_files(ranked, fitted.entries),
        tokens=fitted.tokens,
        built_ms=(time.perf_counter() - started) * 1000,
        cached=False,
        changed=True,
        reason=f"first map: {len(tags)} files parsed first, the rest still parsing",
    )


def first_pass(
    root: Path,
    candidates: Sequence[Candidate],
    cached: Mapping[str, CachedFile],
    request: FirstRequest,
    budget: int,
    count_tokens: Callable[[str], int],
) -> FirstPass | None:
    """What the indexer parses first for ``request`` and how their results
    become its first map; None when few files need a parse (a warm build, a
    small repository: the whole map comes about as soon)."""
    cold = [c for c in candidates if _needs_parse(cached.get(c.path), c)]
    count = first_count(len(cold))
    if not count:
        return None
    request = request._replace(mentions=without_dumps(request.mentions))  # as the full map reads it
    paths = priority_files(root, cold, count, request.chat_files, request.mentions)

    def deliver(results: list[FileResult]) -> None:
        tags = {r.path: r.tags for r in results if r.tags is not None}
        request.on_map(first_map(tags, request, budget, count_tokens))

    return FirstPass(frozenset(paths), deliver)


def _needs_parse(row: CachedFile | None, cand: Candidate) -> bool:
    return row is None or (row.size, row.mtime_ns) != (cand.size, cand.mtime_ns)
