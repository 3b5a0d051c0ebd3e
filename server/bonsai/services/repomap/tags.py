"""Extract definitions and references from one file's source with tree-sitter.

Output is canonical: definitions sorted by (line, name, kind) and deduplicated by
name position; references counted and sorted by name. Capture order inside
tree-sitter therefore never shows in the result.
"""

from __future__ import annotations

import re
import threading

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
    """One query per language holding both the definition and the reference
    patterns, compiled once per process: a file's tags come from one pass."""

    def __init__(self, language: ts.Language, name: str) -> None:
        queries = QUERIES[name]
        self.language = language
        self.query = ts.Query(language, queries.definitions + "\n" + queries.references)


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
    sig = " ".join(text.split())
    if "( " in sig or "[ " in sig or "{ " in sig:  # most headers need neither rewrite
        sig = _OPEN_SPACE.sub(r"\1", sig)
    if " )" in sig or " ]" in sig or " }" in sig:
        sig = _SPACE_CLOSE.sub(r"\1", sig)
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


def _definition_nodes(captures: dict[str, list[ts.Node]]) -> list[tuple[int, int, str, ts.Node]]:
    """Captured definition nodes as (start, -end, kind, node), outermost first; a
    node captured by two patterns keeps the kind of the first."""
    seen: set[tuple[int, int]] = set()
    out: list[tuple[int, int, str, ts.Node]] = []
    for capture, nodes in captures.items():
        if not capture.startswith("definition."):
            continue
        kind = capture[len("definition.") :]
        for node in nodes:
            key = (node.start_byte, node.end_byte)
            if key not in seen:
                seen.add(key)
                out.append((key[0], -key[1], kind, node))
    out.sort(key=lambda d: (d[0], d[1]))
    return out


def _raw_definitions(captures: dict[str, list[ts.Node]], source: bytes) -> list[_RawDef]:
    """Pair each captured name with its definition: the innermost captured
    definition node containing it (a definition's name lies in its own node, and
    never inside a nested definition), found by one sweep over both in order."""
    defs = _definition_nodes(captures)
    names = sorted((n.start_byte, n.end_byte, n) for n in captures.get("name", ()))
    found: dict[int, _RawDef] = {}
    stack: list[tuple[int, int, str, ts.Node]] = []
    i = 0
    for name_start, name_end, name_node in names:
        while i < len(defs) and defs[i][0] <= name_start:
            while stack and -stack[-1][1] <= defs[i][0]:
                stack.pop()
            stack.append(defs[i])
            i += 1
        while stack and -stack[-1][1] < name_end:
            stack.pop()
        if not stack or name_start in found:
            continue
        _start, _end, kind, node = stack[-1]
        raw = _RawDef(node, name_node, kind, source)
        if 0 < len(raw.name) <= MAX_IDENT_CHARS:
            found[name_start] = raw
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


def _references(refs: list[ts.Node], source: bytes, skip: set[int]) -> dict[str, int]:
    counts: dict[bytes, int] = {}
    get = counts.get  # a plain dict: Counter's += costs a Python-level call per use
    for node in refs:
        start = node.start_byte
        end = node.end_byte
        if end - start <= MAX_IDENT_CHARS and start not in skip:
            name = source[start:end]
            counts[name] = get(name, 0) + 1
    named = ((name.decode("utf-8", "replace"), n) for name, n in counts.items())
    return dict(sorted(named))


def extract_tags(path: str, source: bytes, language: str) -> FileTags:
    """Parse ``source`` as ``language`` and return its canonical tags (one query
    pass over the tree gives both definitions and references).

    Raises ``GrammarUnavailable`` when the grammar cannot be loaded."""
    compiled = _compiled_for(language)
    tree = _parser(language, compiled).parse(source)
    captures = ts.QueryCursor(compiled.query).captures(tree.root_node)
    raw = _raw_definitions(captures, source)
    refs = _references(captures.get("ref", []), source, {d.name_start for d in raw})
    definitions = tuple(_nest(raw))
    words = file_words(path, source, (d.name for d in definitions))
    return FileTags(path, language, definitions, refs, words)
