"""The evidence a cold build's first map is chosen by, from the files' bytes.

Before anything is parsed, the files the first map is made of are chosen
(``first_map.priority_files``). Paths and import lines alone miss what an issue
most often names or describes: a function it calls (``Matrix.col_insert()``), a
filter it is about (``floatformat``), a word only the code's strings and
docstrings hold (``psql``). So the choice reads the sources it already opens for
their import lines in full (up to ``FILE_BYTES`` a file, source files only: the
answer is rarely a test) and scans them, lower-cased and joined into one buffer,
with C-speed ``bytes.find``:

* **definitions**: every ``def NAME`` / ``class NAME`` (and the definition
  keywords of the other languages present) once, giving the names each file
  defines; the text's words that are defined names score their definers, each
  name weighted as the full map's mentions lane weighs it
  (``mentions.specificity``, three times when written as code) and split among
  the files defining it;
* **words**: the text's rarest words (``MAX_WORDS``: estimated on every
  ``SAMPLE_EVERY``-th file, then counted over all), BM25 over presence as the
  full map's lexical lane, a word matching where it occurs in a name part,
  docstring, comment or string literal.

Both are deterministic (files in the given order, ties by path) and cost a few
scans of the sources, not a parse: ``bytes.find`` skips through a buffer at
gigabytes a second. A hostile repository gains nothing: the files are opened
confined to the workspace (``Workspace.open_file``), a file is read only up to
``FILE_BYTES`` and the whole buffer stops at ``TOTAL_BYTES``.
"""

from __future__ import annotations

import math
import os
import re
from bisect import bisect_right
from collections.abc import Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from bonsai.services.fs.confined import ConfinementError, Workspace, open_entry, read_fd
from bonsai.services.repomap.languages import language_for_path
from bonsai.services.repomap.mentions import _code_words, specificity
from bonsai.services.repomap.words import STOP, text_words

HEAD_BYTES = 4096  # what every file gives for its import lines
FILE_BYTES = 256 * 1024  # of a source file scanned
TOTAL_BYTES = 48 * 1024 * 1024  # of all sources scanned (then heads only)
MAX_WORDS = 16  # the text's words counted over every source
SAMPLE_EVERY = 8  # the words' rarity is estimated on one source in this many
MIN_WORD = 4  # shorter words are not scanned for (too common as substrings)
K1, B = 1.2, 0.3  # BM25, as ``lexical.py``
_IDENT = re.compile(rb"[a-z_$][a-z0-9_$]*")
_TEXT_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FILLER_TEXT = (
    "this that with from when what which where there their then than into have been"
    " being were will would should could does done make made also only some such more"
    " most much many very just like each every other using used uses"
)
_FILLERS = frozenset(_FILLER_TEXT.split())
# The keywords a definition starts with, per language (lower-cased: the buffer is).
DEFINERS: dict[str, tuple[bytes, ...]] = {
    "python": (b"def ", b"class "),
    "javascript": (b"function ", b"class "),
    "typescript": (b"function ", b"class ", b"interface ", b"type ", b"enum "),
    "tsx": (b"function ", b"class ", b"interface ", b"type ", b"enum "),
    "go": (b"func ", b"type "),
    "rust": (b"fn ", b"struct ", b"enum ", b"trait ", b"type "),
    "java": (b"class ", b"interface ", b"enum "),
    "c": (b"struct ", b"enum "),
    "cpp": (b"class ", b"struct ", b"enum "),
    "c_sharp": (b"class ", b"interface ", b"struct ", b"enum "),
    "ruby": (b"def ", b"class ", b"module "),
    "php": (b"function ", b"class ", b"interface ", b"trait "),
}
_SPACE = frozenset(b" \t\n\r\0;{}(")


class SourceScan(NamedTuple):
    """The scanned sources: ``text`` holds file ``i`` lower-cased at
    ``[starts[i], starts[i + 1] - 1)`` (files joined by a NUL byte)."""

    files: list[str]
    starts: list[int]
    text: bytes | bytearray
    languages: frozenset[str]

    def file_at(self, pos: int) -> int:
        return bisect_right(self.starts, pos) - 1

    def end_of(self, fid: int) -> int:
        return self.starts[fid + 1] - 1 if fid + 1 < len(self.starts) else len(self.text)

    def files_with(self, needle: bytes, fids: Iterable[int] | None = None) -> list[int]:
        """Ids of the files holding ``needle`` (ascending), visiting each file's
        first occurrence only; within ``fids`` when given."""
        text, found = self.text, []
        if fids is not None:
            for fid in fids:
                if text.find(needle, self.starts[fid], self.end_of(fid)) >= 0:
                    found.append(fid)
            return found
        pos = text.find(needle)
        while pos >= 0:
            fid = self.file_at(pos)
            found.append(fid)
            pos = text.find(needle, self.end_of(fid))
        return found


class Sources(NamedTuple):
    heads: dict[str, bytes]  # path -> its first ``HEAD_BYTES`` (every file read)
    scan: SourceScan


def _read_all(
    root: Path, paths: Sequence[str], limits: Sequence[int]
) -> Iterator[tuple[int, bytes]]:
    """``(i, the first limits[i] bytes of paths[i])`` for each file that can be
    read, directory by directory: each directory opened once, confined to the
    workspace (``Workspace.open_dir``), each file in it through its descriptor,
    never through a symbolic link and only when singly linked (``open_entry``)."""
    by_dir: dict[str, list[int]] = {}
    for i, rel in enumerate(paths):
        by_dir.setdefault(rel.rpartition("/")[0], []).append(i)
    with Workspace(root) as ws:
        for folder in sorted(by_dir):
            try:
                dir_fd, _ = ws.open_dir(folder or ".")
            except (OSError, ConfinementError):
                continue
            try:
                for i in by_dir[folder]:
                    rel = paths[i]
                    try:
                        fd = open_entry(dir_fd, rel.rpartition("/")[2], rel)
                        yield i, read_fd(fd, limits[i])
                    except (OSError, ConfinementError):
                        continue
            finally:
                os.close(dir_fd)


def read_sources(root: Path, paths: Sequence[str], scanned: Sequence[bool]) -> Sources:
    """Every file's head; the ``scanned`` ones in full (see module doc), directory
    by directory (deterministic), lower-cased into one buffer as they are read."""
    limits = [FILE_BYTES if scan else HEAD_BYTES for scan in scanned]
    heads: dict[str, bytes] = {}
    text = bytearray()
    files: list[str] = []
    starts: list[int] = []
    languages: set[str] = set()
    for i, data in _read_all(root, paths, limits):
        rel = paths[i]
        heads[rel] = data[:HEAD_BYTES]
        if limits[i] > HEAD_BYTES and len(text) < TOTAL_BYTES and data:
            if b"\0" in data[:8192]:
                continue  # binary
            if files:
                text += b"\0"
            starts.append(len(text))
            text += data.lower()
            files.append(rel)
            languages.add(language_for_path(rel) or "")
    languages.discard("")
    return Sources(heads, SourceScan(files, starts, text, frozenset(languages)))


def defined_names(
    scan: SourceScan, wanted: Collection[bytes] | None = None
) -> dict[bytes, list[int]]:
    """Lower-cased name -> ids of the files defining it (``DEFINERS``); only the
    names of ``wanted`` when given (the text's words: one regular-expression
    search per keyword for just those names, instead of a Python step per
    definition of the repository)."""
    keywords = sorted({k for lang in scan.languages for k in DEFINERS.get(lang, ())})
    if wanted is None:
        name = _IDENT.pattern
    elif wanted:  # longest first; the lookahead keeps only whole names
        ordered = sorted(wanted, key=lambda w: (-len(w), w))
        name = b"(?:" + b"|".join(map(re.escape, ordered)) + b")(?![a-z0-9_$])"
    else:
        return {}
    text = scan.text
    out: dict[bytes, list[int]] = {}
    for keyword in keywords:  # the match holds the keyword only: the next starts after it
        for found in re.finditer(re.escape(keyword) + b"(?=(" + name + b"))", text):
            pos = found.start()
            if pos == 0 or text[pos - 1] in _SPACE:
                fids = out.setdefault(found.group(1), [])
                fid = scan.file_at(pos)
                if not fids or fids[-1] != fid:
                    fids.append(fid)
    for fids in out.values():
        if len(fids) > 1:
            fids[:] = sorted(set(fids))
    return out


def definition_scores(scan: SourceScan, text: str) -> dict[str, float]:
    """Per file, the weight of the text's words it defines (module doc)."""
    written = {w for w in set(_TEXT_IDENT.findall(text)) if len(w) >= 2}
    defined = defined_names(scan, {w.lower().encode() for w in written})
    code = _code_words(text)
    weights: dict[bytes, float] = {}
    for word in written:
        key = word.lower().encode()
        if key not in defined:
            continue
        weight = min(1.0, specificity(word) * (3.0 if word in code else 1.0))
        weights[key] = max(weights.get(key, 0.0), weight)
    scores: dict[str, float] = {}
    for key in sorted(weights):
        fids = defined[key]
        for fid in fids:
            path = scan.files[fid]
            scores[path] = scores.get(path, 0.0) + weights[key] / len(fids)
    return scores


def query_words(text: str) -> dict[str, float]:
    """The text's words worth a scan, with their query weight."""
    return {
        w: math.sqrt(min(n, 3))
        for w, n in text_words(text).items()
        if len(w) >= MIN_WORD and w not in STOP and w not in _FILLERS
    }


def word_scores(scan: SourceScan, text: str) -> dict[str, float]:
    """BM25 over presence of the text's rarest ``MAX_WORDS`` words (module doc)."""
    query = query_words(text)
    n_files = len(scan.files)
    if not query or not n_files:
        return {}
    sample = range(0, n_files, SAMPLE_EVERY)
    guessed = {w: len(scan.files_with(w.encode(), sample)) for w in sorted(query)}
    rarest = sorted(query, key=lambda w: (guessed[w], -query[w], -len(w), w))[:MAX_WORDS]
    lengths = [scan.end_of(i) - scan.starts[i] for i in range(n_files)]
    mean = max(1.0, sum(lengths) / n_files)
    scores = [0.0] * n_files
    for word in sorted(rarest):
        fids = scan.files_with(word.encode())
        if not fids:
            continue
        idf = math.log1p((n_files - len(fids) + 0.5) / (len(fids) + 0.5))
        for fid in fids:
            norm = K1 * (1.0 - B + B * lengths[fid] / mean)
            scores[fid] += idf * query[word] * (K1 + 1.0) / (1.0 + norm)
    return {scan.files[i]: s for i, s in enumerate(scores) if s > 0}


def ranked(scores: dict[str, float]) -> list[str]:
    """Paths best first, ties by path."""
    return sorted(scores, key=lambda p: (-scores[p], p))
