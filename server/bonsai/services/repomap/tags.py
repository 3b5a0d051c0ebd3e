"""Extract definitions and references from one file's source with tree-sitter.

Output is canonical: definitions sorted by (line, name, kind) and deduplicated by
name position; references counted and sorted by name. Capture order inside
tree-sitter therefore never shows in the result.
"""

from __future__ import annotations

import re
import threading
from collections import Counter

import tree_sitter as ts

from bonsai.services.repomap.languages import load_language
from bonsai.services.repomap.queries import QUERIES
from bonsai.services.repomap.records import Definition, FileTags
from bonsai.services.repomap.words import file_words

MAX_IDENT_CHARS = 80
MAX_SIGNATURE_BYTES = 400
_OPEN_SPACE = re.compile(r"([(\[{]) ")
_SPACE_CLOSE = re.compile(r",? ([)\]}])")
_CONTAINERS = frozenset({"class", "struct", "impl", "trait", "interface", "enum"})


class GrammarUnavailable(RuntimeError):
    """The language has a query but its grammar cannot be loaded here."""


class _Compiled:
    def __init__(self, language: ts.Language, name: str) -> None:
        queries = QUERIES[name]
        self.language = language
        self.definitions = ts.Query(language, queries.definitions)
        self.references = ts.Query(language, queries.references)


_compiled: dict[str, _Compiled] = {}
_compile_lock = threading.Lock()
_local = threading.local()


def _compiled_for(language: str) -> _Compiled:
    with _compile_lock:
        if language not in _compiled:
            grammar = load_language(language)
            if grammar is None:
                raise GrammarUnavailable(f"no grammar for {language}")
            _compiled[language] = _Compiled(grammar, language)
        return _compiled[language]


def _parser(language: str, compiled: _Compiled) -> ts.Parser:
    parsers: dict[str, ts.Parser] = getattr(_local, "parsers", None) or {}
    _local.parsers = parsers
    if language not in parsers:
        parsers[language] = ts.Parser(compiled.language)
    return parsers[language]


def _signature(node: ts.Node, source: bytes) -> str:
    """The definition header: from the first non-blank character of its first line
    up to its body (or the end of that line), whitespace collapsed."""
    line_start = source.rfind(b"\n", 0, node.start_byte) + 1
    body = node.child_by_field_name("body")
    if body is not None and body.start_byte > node.start_byte:
        end = body.start_byte
    else:
        newline = source.find(b"\n", node.start_byte)
        end = node.end_byte if newline == -1 else min(newline, node.end_byte)
    end = min(end, line_start + MAX_SIGNATURE_BYTES)
    text = source[line_start:end].decode("utf-8", "replace")
    sig = _SPACE_CLOSE.sub(r"\1", _OPEN_SPACE.sub(r"\1", " ".join(text.split())))
    return sig[:-1].rstrip() if sig.endswith("{") else sig


class _RawDef:
    __slots__ = ("end", "kind", "line", "name", "name_start", "signature", "start")

    def __init__(self, node: ts.Node, name_node: ts.Node, kind: str, source: bytes) -> None:
        self.start = node.start_byte
        self.end = node.end_byte
        self.name_start = name_node.start_byte
        self.name = source[name_node.start_byte : name_node.end_byte].decode("utf-8", "replace")
        self.kind = kind
        self.line = node.start_point[0] + 1
        self.signature = _signature(node, source)


def _raw_definitions(compiled: _Compiled, tree: ts.Tree, source: bytes) -> list[_RawDef]:
    found: dict[int, _RawDef] = {}
    cursor = ts.QueryCursor(compiled.definitions)
    for _pattern, captures in cursor.matches(tree.root_node):
        names = captures.get("name")
        if not names:
            continue
        for capture, nodes in captures.items():
            if capture.startswith("definition.") and nodes:
                raw = _RawDef(nodes[0], names[0], capture[len("definition.") :], source)
                if 0 < len(raw.name) <= MAX_IDENT_CHARS and raw.name_start not in found:
                    found[raw.name_start] = raw
    return sorted(found.values(), key=lambda d: (d.start, -d.end, d.name))


def _nest(raw: list[_RawDef]) -> list[Definition]:
    """Depth from containment; a function directly inside a class-like is a method."""
    stack: list[_RawDef] = []
    out: list[Definition] = []
    for d in raw:
        while stack and stack[-1].end <= d.start:
            stack.pop()
        kind = d.kind
        if kind == "function" and stack and stack[-1].kind in _CONTAINERS:
            kind = "method"
        out.append(Definition(d.name, kind, d.line, d.signature, len(stack)))
        stack.append(d)
    return sorted(set(out), key=lambda d: (d.line, d.name, d.kind, d.depth, d.signature))


def _references(
    compiled: _Compiled, tree: ts.Tree, source: bytes, skip: set[int]
) -> dict[str, int]:
    counts: Counter[bytes] = Counter()
    cursor = ts.QueryCursor(compiled.references)
    for node in cursor.captures(tree.root_node).get("ref", ()):
        start = node.start_byte
        if start not in skip and node.end_byte - start <= MAX_IDENT_CHARS:
            counts[source[start : node.end_byte]] += 1
    named = ((name.decode("utf-8", "replace"), n) for name, n in counts.items())
    return dict(sorted(named))


def extract_tags(path: str, source: bytes, language: str) -> FileTags:
    """Parse ``source`` as ``language`` and return its canonical tags.

    Raises ``GrammarUnavailable`` when the grammar cannot be loaded."""
    compiled = _compiled_for(language)
    tree = _parser(language, compiled).parse(source)
    raw = _raw_definitions(compiled, tree, source)
    refs = _references(compiled, tree, source, {d.name_start for d in raw})
    return FileTags(path, language, tuple(_nest(raw)), refs, file_words(path, source))
