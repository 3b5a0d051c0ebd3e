"""The part of an issue that talks about the code: environment dumps left out.

Bug-report templates ask for the environment, so many issues end in a block of
``package: version`` lines (``xr.show_versions()``, ``sklearn.show_versions()``)
or a ``pip list`` / ``conda list`` table. Its words are package and platform
names; in a repository with modules named after the packages it supports
(``backends/zarr.py``, ``backends/h5netcdf_.py``) they name those modules as
strongly as the issue names the one it is about, and a 300-line ``pip list``
outweighs the issue's few sentences in BM25.

A dump is a run of at least ``MIN_RUN`` lines each of one key and one short
value (``key: value`` or ``key`` and the value after two or more spaces), at
least half of whose values look like versions (start with a digit, or are
``None``). Such a run is dropped; everything else is kept as written.
"""

from __future__ import annotations

import re

MIN_RUN = 5
DROP_DUMPS = True  # off: the text is ranked as written (the corpus bench's ablation)
_PAIR = re.compile(r"[ \t]*[\w.\-\[\]]{1,60}(?::[ \t]*|[ \t]{2,})(\S[^\n]{0,120})?[ \t]*")
_VERSIONISH = re.compile(r"(?:v?\d|None\b|unknown\b|not installed)")


def without_dumps(text: str) -> str:
    """``text`` without its environment-dump runs (module doc)."""
    if not DROP_DUMPS or "\n" not in text:
        return text
    lines = text.split("\n")
    keep = [True] * len(lines)
    start = 0
    while start < len(lines):
        end = start
        versions = 0
        while end < len(lines) and (match := _PAIR.fullmatch(lines[end])):
            value = match.group(1) or ""
            versions += bool(_VERSIONISH.match(value))
            end += 1
        if end - start >= MIN_RUN and 2 * versions >= end - start:
            keep[start:end] = [False] * (end - start)
        start = max(end, start + 1)
    if all(keep):
        return text
    return "\n".join(line for line, kept in zip(lines, keep, strict=True) if kept)
