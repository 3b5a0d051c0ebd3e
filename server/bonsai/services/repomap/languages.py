"""Which language a file is, and where its tree-sitter grammar comes from.

Grammars load from the per-language wheels (``tree-sitter-python`` ...), which
ship compiled parsers. ``tree-sitter-language-pack`` 1.x fetches grammars from
the network on first use, so it is consulted only for grammars it has already
cached on disk: nothing here ever downloads. A language whose grammar cannot be
loaded is reported once (``grammar_problems``) and its files are listed by path
only.
"""

from __future__ import annotations

import importlib
import logging
import threading
from pathlib import PurePosixPath

import tree_sitter as ts

from bonsai.services.repomap.queries import QUERIES

log = logging.getLogger(__name__)

EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".cs": "c_sharp",
    ".rb": "ruby",
    ".php": "php",
}

# language -> (module, function returning the language pointer)
WHEELS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "c_sharp": ("tree_sitter_c_sharp", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "php": ("tree_sitter_php", "language_php"),
}
_PACK_NAMES = {"c_sharp": "csharp"}

_lock = threading.Lock()
_languages: dict[str, ts.Language | None] = {}
grammar_problems: dict[str, str] = {}


def language_for_path(path: str) -> str | None:
    """The tag language of a path by extension, or None (listed by path only):
    ``PurePosixPath(path).suffix``, by string operations when the last
    component is a plain name (a build asks this of every file, some twice)."""
    name = path[path.rfind("/") + 1 :]
    if not name or name == ".":  # "dir/", "dir/.": pathlib's own reading of it
        return EXTENSIONS.get(PurePosixPath(path).suffix.lower())
    dot = name.rfind(".")
    if dot <= 0 or dot == len(name) - 1:
        return None
    return EXTENSIONS.get(name[dot:].lower())


def _from_wheel(language: str) -> ts.Language:
    module_name, func = WHEELS[language]
    module = importlib.import_module(module_name)
    return ts.Language(getattr(module, func)())


def _from_pack(language: str) -> ts.Language:
    import tree_sitter_language_pack as pack

    name = _PACK_NAMES.get(language, language)
    if name not in pack.downloaded_languages():
        raise LookupError(f"grammar {name!r} is not cached by tree-sitter-language-pack")
    return pack.get_language(name)  # type: ignore[no-any-return]


def load_language(language: str) -> ts.Language | None:
    """The grammar for ``language``, or None (problem recorded once, logged)."""
    with _lock:
        if language in _languages:
            return _languages[language]
        loaded: ts.Language | None = None
        errors: list[str] = []
        for loader in (_from_wheel, _from_pack):
            try:
                loaded = loader(language)
                break
            except Exception as exc:  # missing wheel, ABI mismatch, not cached
                errors.append(f"{loader.__name__}: {exc}")
        if loaded is None:
            msg = f"no tree-sitter grammar for {language}: " + "; ".join(errors)
            grammar_problems[language] = msg
            log.warning("%s (files listed by path only)", msg)
        _languages[language] = loaded
        return loaded


def supported_languages() -> list[str]:
    """Languages with a tag query (whether or not their grammar loads here)."""
    return sorted(QUERIES)
