"""``.gitignore`` patterns matched by ``regex`` instead of ``re``.

pathspec turns a glob into a regular expression (``*a*a*a*a*a*b`` into
``[^/]*a[^/]*a…``) and matches it with ``re``, which backtracks through such a
pattern for minutes over one long file name, holding the GIL: a hostile
repository's ``.gitignore`` froze the daemon's event loop while the map was built
beside it. ``regex`` answers the same expression at once and lets go of the GIL
while it matches. Only the repository map's walk uses this (it asks every path).

Both libraries load with the first ``.gitignore`` (a parse worker needs neither)."""

from __future__ import annotations

import functools
from typing import Any


@functools.cache
def git_pattern() -> Any:
    """pathspec's own git pattern class, its expressions compiled by ``regex``."""
    import regex
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

    class RegexGitIgnorePattern(GitIgnoreSpecPattern):
        __slots__ = ()

        def __init__(self, pattern: Any, include: bool | None = None) -> None:
            super().__init__(pattern, include)
            if self.regex is not None:
                self.regex = regex.compile(self.regex.pattern, self.regex.flags)

    return RegexGitIgnorePattern
