"""Read a user's text for the files and identifiers it names.

Files: a path (``src/http/client.py``), a path suffix (``http/client.py``), a
longer path ending in a workspace path (a link to the file on a forge), a
basename with extension (``client.py``, when at most three files share it), a
dotted module (``http.client``) or a bare module/file stem (``shlex``, when at
most two files have it). Identifiers: any word the repository defines, weighted
by how specific it is (``parse_header`` or ``HTTPConnection`` say more than
``open``) and 3× when written as code (in backticks, called, or dotted).

Prose: an issue that only describes behaviour ("the default browser is not
used") rarely writes a defined name, but its words are often *parts* of names
(``BaseBrowser``, ``get_default``). Every plain word of four or more letters
(minus a few English fillers; a simple plural/verb ending stripped too) gives
``PART_SHARE`` spread evenly over the defined names having it as a part, when
at most ``PART_MAX_IDENTS`` do: a word shared by many names says little.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Container, Iterable
from itertools import accumulate
from pathlib import PurePosixPath
from typing import NamedTuple

from bonsai.services.repomap.graph import is_specific

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PATHISH = re.compile(r"[A-Za-z0-9_./\\-]+")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_CALLED = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")  # \b: linear on long words
_DOTTED = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_INDEX_STEMS = frozenset({"__init__", "index", "mod", "main", "lib"})

FILE_WEIGHT = 1.0
STEM_WEIGHT = 0.5
PART_SHARE = 1.0
PART_MAX_IDENTS = 50
_NAME_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")
_PROSE_WORD = re.compile(r"[A-Za-z]{4,}")
_ENDINGS = (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ing", ""), ("er", ""))
_FILLER_TEXT = (
    "this that with from when what which where there their then than into onto have been"
    " being were will would should could does done make made also only some such more most"
    " much many very just like each every other returns return given used uses using value"
    " values true false none data file self object objects type types name names"
)
_FILLERS = frozenset(_FILLER_TEXT.split())


class Mentions(NamedTuple):
    files: dict[str, float]  # path -> weight
    idents: dict[str, float]  # identifier -> weight

    @property
    def empty(self) -> bool:
        return not self.files and not self.idents


class PathIndex(NamedTuple):
    paths: frozenset[str]
    by_basename: dict[str, list[str]]
    by_stem: dict[str, list[str]]


NO_PATHS = PathIndex(frozenset(), {}, {})


def _stem(name: str) -> str:
    """``PurePosixPath(name).stem`` without building a path object."""
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


def build_path_index(paths: Iterable[str]) -> PathIndex:
    by_basename: dict[str, list[str]] = {}
    by_stem: dict[str, list[str]] = {}
    all_paths = sorted(paths)
    for path in all_paths:
        parent, _, name = path.rpartition("/")
        by_basename.setdefault(name, []).append(path)
        stem = _stem(name)
        if stem in _INDEX_STEMS and parent:
            stem = parent.rpartition("/")[2]  # pkg/__init__.py answers to "pkg"
        by_stem.setdefault(stem, []).append(path)
    return PathIndex(frozenset(all_paths), by_basename, by_stem)


def _path_candidates(token: str, index: PathIndex) -> list[str]:
    token = token.replace("\\", "/").strip("./")
    if not token:
        return []
    if token in index.paths:
        return [token]
    name = PurePosixPath(token).name
    if "/" in token:  # a path suffix, or a longer path (a URL) ending in one of ours
        suffix = "/" + token
        found = index.by_basename.get(name, ())
        return [p for p in found if p.endswith(suffix) or token.endswith("/" + p)]
    matches = index.by_basename.get(name, [])
    return matches if 0 < len(matches) <= 3 else []


def _module_candidates(dotted: str, index: PathIndex) -> list[str]:
    """``a.b.c`` names module ``a/b/c`` or, failing that, ``a/b`` (``a.b`` + attr)."""
    parts = dotted.split(".")
    for end in range(len(parts), 1, -1):
        rel = "/".join(parts[:end])
        out: set[str] = set()
        for candidate in (rel + ".py", rel + "/__init__.py", rel + ".rs", rel + "/mod.rs"):
            out.update(_path_candidates(candidate, index))
        if out:
            return sorted(out)
    return []


def mentioned_files(text: str, index: PathIndex) -> dict[str, float]:
    found: dict[str, float] = {}
    for token in _PATHISH.findall(text):
        if "." in token.strip(".") or "/" in token:
            for path in _path_candidates(token, index):
                found[path] = FILE_WEIGHT
    for dotted in _DOTTED.findall(text):
        for path in _module_candidates(dotted, index):
            found.setdefault(path, FILE_WEIGHT)
    for word in set(_WORD.findall(text)):
        stems = index.by_stem.get(word, [])
        if len(word) >= 4 and 0 < len(stems) <= 2:
            for path in stems:
                found.setdefault(path, STEM_WEIGHT)
    return found


def _code_words(text: str) -> set[str]:
    words: set[str] = set()
    for span in _CODE_SPAN.findall(text):
        words.update(_WORD.findall(span))
    words.update(_CALLED.findall(text))
    for dotted in _DOTTED.findall(text):
        words.update(dotted.split("."))
    return words


def specificity(name: str) -> float:
    """How much naming ``name`` tells about where to look."""
    if name.startswith("__") and name.endswith("__"):
        return 0.05
    if is_specific(name):
        return 1.0
    if name[:1].isupper():
        return 0.4  # a class-like word: Request, Session
    return 0.1 if len(name) >= 4 else 0.03


def mentioned_idents(text: str, defined: Container[str]) -> dict[str, float]:
    code = _code_words(text)
    found: dict[str, float] = {}
    for word in sorted(set(_WORD.findall(text))):
        if word in defined:
            weight = specificity(word) * (3.0 if word in code else 1.0)
            found[word] = min(1.0, weight)
    return found


class WordParts:
    """The defined names, searchable by lower-case name part (four letters or
    more). Nothing is indexed up front: the names are joined into one lower-case
    text once, and a part is looked up with one scan of it (a task has a few
    dozen words; a large repository tens of thousands of names)."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._names: list[str] = list(names)
        self._joined: tuple[str, list[int]] | None = None
        self._found: dict[str, set[str]] = {}  # a session's task words come back each turn
        self._pending: list[str] = []  # names added since the text was joined

    def add(self, names: Iterable[str]) -> None:
        """Add names without rescanning: every part already looked up gains the
        new names having it, and the joined text takes them in when it is next
        scanned (a part never looked up before), not on every edit: a copy of the
        whole text per added name is what the repository holds, not what it adds."""
        new = list(names)
        if not new:
            return
        if self._joined is not None and self._names:
            self._pending.extend(new)
        else:
            self._joined, self._pending = None, []
        self._names.extend(new)
        for name in new:
            for part in name_parts(name):
                found = self._found.get(part)
                if found is not None:
                    found.add(name)

    def containing(self, part: str) -> set[str]:
        """Names having ``part`` as one of their parts."""
        found = self._found.get(part)
        if found is None:
            found = self._found[part] = self._scan(part)
        return found

    def _scan(self, part: str) -> set[str]:
        text, starts = self._text()
        lines: set[int] = set()
        for match in re.finditer(re.escape(part), text):
            lines.add(bisect_right(starts, match.start()) - 1)
        return {n for n in (self._names[i] for i in lines) if part in name_parts(n)}

    def _text(self) -> tuple[str, list[int]]:
        if self._joined is None:
            lower = [name.lower() for name in self._names]
            starts = list(accumulate((len(n) + 1 for n in lower[:-1]), initial=0))
            self._joined, self._pending = ("\n".join(lower), starts), []
        elif self._pending:  # the names added since: one line each, at the end
            text, starts = self._joined
            lower = [name.lower() for name in self._pending]
            starts.extend(accumulate((len(n) + 1 for n in lower[:-1]), initial=len(text) + 1))
            self._joined, self._pending = (text + "\n" + "\n".join(lower), starts), []
        return self._joined


NO_PARTS = WordParts()


def name_parts(name: str) -> set[str]:
    """``HTTPConnection`` -> {http, connection}; ``get_default`` -> {default}."""
    if name.islower() or name.isupper():  # no camel humps: the underscores split it
        return {p.lower() for p in name.split("_") if len(p) >= 4 and p.isalpha()}
    return {p.lower() for p in _NAME_PART.findall(name) if len(p) >= 4}


def _word_forms(word: str) -> set[str]:
    forms = {word}
    for ending, replacement in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 4:
            forms.add(word[: -len(ending)] + replacement)
    return forms


def _defined_hits(word: str, parts: WordParts, defined: Container[str]) -> list[str]:
    """The defined names having one of the word's forms as a part, sorted; stops
    counting past ``PART_MAX_IDENTS`` (such a word adds nothing), so a common
    word costs ~50 lookups, not one per name that has it."""
    forms = [parts.containing(form) for form in _word_forms(word)]
    candidates = forms[0] if len(forms) == 1 else set().union(*forms)
    hits: list[str] = []
    for name in candidates:
        if name in defined:
            hits.append(name)
            if len(hits) > PART_MAX_IDENTS:
                break
    return sorted(hits)


def prose_idents(text: str, parts: WordParts, defined: Container[str]) -> dict[str, float]:
    """Defined names whose parts the text's plain words are (see module doc)."""
    found: dict[str, float] = {}
    words = {w.lower() for w in _PROSE_WORD.findall(text)} - _FILLERS
    for word in sorted(words):
        hits = _defined_hits(word, parts, defined)
        if 0 < len(hits) <= PART_MAX_IDENTS:
            for name in hits:
                found[name] = found.get(name, 0.0) + PART_SHARE / len(hits)
    return found


class MentionKeys(NamedTuple):
    """What a text's mentions of identifiers depend on: its words (one of them
    becoming or ceasing to be a defined name changes ``mentioned_idents``) and
    the forms of its prose words (a defined name with such a part changes
    ``prose_idents``)."""

    words: frozenset[str]
    forms: frozenset[str]

    def touched_by(self, name: str) -> bool:
        """Can ``name`` becoming defined (or undefined) change these mentions?"""
        return name in self.words or not self.forms.isdisjoint(name_parts(name))


def mention_keys(text: str) -> MentionKeys:
    prose = {w.lower() for w in _PROSE_WORD.findall(text)} - _FILLERS
    forms = frozenset(f for word in prose for f in _word_forms(word))
    return MentionKeys(frozenset(_WORD.findall(text)), forms)


def parse_mentions(
    text: str, index: PathIndex, defined: Container[str], parts: WordParts = NO_PARTS
) -> Mentions:
    if not text.strip():
        return Mentions({}, {})
    idents = mentioned_idents(text, defined)
    for name, weight in prose_idents(text, parts, defined).items():
        idents[name] = idents.get(name, 0.0) + weight
    return Mentions(mentioned_files(text, index), idents)
