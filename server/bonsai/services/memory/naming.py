"""Entry names: validation and derivation of a kebab-case name from a fact."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection

from bonsai.core.retrieval.text import content_terms

NAME_MAX = 64
NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_DERIVED_WORDS = 6
_DERIVED_MAX = 48


def name_problem(name: str) -> str | None:
    """Why ``name`` is not a valid entry name, or ``None`` when it is."""
    if not name:
        return "the name is empty"
    if name.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:[\\/]", name):
        return f"{name!r} is an absolute path; give a bare kebab-case name"
    if ".." in name:
        return f"{name!r} contains '..'; names cannot leave the memory folder"
    if "/" in name or "\\" in name:
        return f"{name!r} contains a path separator; give a bare kebab-case name"
    if name.endswith(".md"):
        return f"{name!r} ends with '.md'; give the name without the extension"
    if len(name) > NAME_MAX:
        return f"the name is {len(name)} characters (limit {NAME_MAX})"
    if not NAME_RE.match(name):
        return (
            f"{name!r} is not kebab-case (lower-case letters and digits joined by single "
            f"hyphens), e.g. {kebab(name) or 'my-fact'!r}"
        )
    return None


def kebab(text: str) -> str:
    """Best-effort kebab-case form of arbitrary text (ASCII only)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    return "-".join(words)[:NAME_MAX].strip("-")


def derive_name(fact: str, taken: Collection[str] = ()) -> str:
    """A short kebab name from the first content words of ``fact``, made
    unique against ``taken`` with a numeric suffix."""
    words: list[str] = []
    for term in content_terms(fact, expand=False):
        piece = kebab(term)
        if not piece:
            continue
        if words and len("-".join([*words, piece])) > _DERIVED_MAX:
            break
        words.append(piece)
        if len(words) == _DERIVED_WORDS:
            break
    base = "-".join(words)[:_DERIVED_MAX].strip("-") or "note"
    return unique_name(base, taken)


def unique_name(base: str, taken: Collection[str]) -> str:
    if base not in taken:
        return base
    counter = 2
    while f"{base}-{counter}" in taken:
        counter += 1
    return f"{base}-{counter}"
