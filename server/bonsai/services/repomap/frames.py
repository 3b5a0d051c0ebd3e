"""The files a text's tracebacks name, innermost frame first.

A crash report's traceback lists the call path down to where it failed, and the
fix is most often in the innermost frames that are the repository's own code:
``File "/venv/lib/python3.11/site-packages/pkg/sub/mod.py", line 9, in f`` (a
CPython frame), ``File ~/env/lib/pkg/sub/mod.py:9, in f`` (IPython) or
``pkg/sub/mod.py:9: in f`` / ``pkg/sub/mod.py:9`` (pytest, compilers, linters).

A frame's path names a repository file when the repository path is a suffix of
it, or when both end in the same two or more path parts: an installed package
lives at ``site-packages/pkg/sub/mod.py`` while its repository keeps it under a
source root (``lib/pkg/sub/mod.py``, ``src/pkg/sub/mod.py``), which no suffix
rule matches. A bare basename (``mod.py:3``) counts only when one file has it.

Each traceback (split at ``Traceback (most recent call last)``) scores its
resolved frames ``DECAY ** d``, ``d`` counted from its innermost resolved frame,
and a file scores the sum over its frames: the innermost repository frame
leads, a file the call path passes through several times gains, and the outer
frames (a command runner, the test harness) count least. Test files are left
out (the answer is rarely the test).
"""

from __future__ import annotations

import itertools
import re

import numpy as np

from bonsai.core.repomap.pagerank import FloatArray

DECAY = 0.7  # weight of a frame one step further out than the next
MAX_FRAMES = 400  # frames read per text (the innermost ones are the last)
MAX_TIED = 3  # files one frame may name (equally good matches) before it names none
_HEADER = re.compile(r"Traceback \(most recent call last\)")
_FRAME = re.compile(
    r'File "([^"\n]{1,400})", line \d'  # CPython
    r"|(?<![^\s\"'(\[<])"  # else a path starting after a space, quote or bracket
    r"([^\s\"'()\[\]<>,:=]{1,400}?\.[A-Za-z][A-Za-z0-9]{0,7}):\d"  # path.py:12
)


def frame_paths(text: str) -> list[list[str]]:
    """The frame paths of each traceback in ``text``, outermost first (text with
    no ``Traceback`` header is one group: a pytest or linter report)."""
    bounds = sorted({0, len(text), *(m.start() for m in _HEADER.finditer(text))})
    groups: list[list[str]] = []
    for lo, hi in itertools.pairwise(bounds):
        paths = [m.group(1) or m.group(2) for m in _FRAME.finditer(text, lo, hi)]
        if paths:
            groups.append(paths)
    extra = sum(map(len, groups)) - MAX_FRAMES
    while extra > 0:  # keep the last (innermost) frames
        cut = min(extra, len(groups[0]))
        groups[0] = groups[0][cut:]
        extra -= cut
        if not groups[0]:
            groups.pop(0)
    return groups


class BasenameIndex:
    """Repository paths by basename, split into parts once."""

    def __init__(self, files: list[str]) -> None:
        self.files = files
        self.by_name: dict[str, list[tuple[int, list[str]]]] = {}
        for fid, path in enumerate(files):
            parts = path.split("/")
            self.by_name.setdefault(parts[-1], []).append((fid, parts))

    def resolve(self, path: str) -> list[int]:
        """The files ``path`` names (see module doc), best matches only."""
        parts = [p for p in path.replace("\\", "/").split("/") if p and p != "."]
        if not parts:
            return []
        candidates = self.by_name.get(parts[-1], [])
        best, found = 0, []
        for fid, own in candidates:
            common = 0
            for a, b in zip(reversed(own), reversed(parts), strict=False):
                if a != b:
                    break
                common += 1
            whole = common == len(own)
            if not (whole or common >= 2 or (len(parts) == 1 and len(candidates) == 1)):
                continue
            if common > best:
                best, found = common, [fid]
            elif common == best:
                found.append(fid)
        return found if len(found) <= MAX_TIED else []


_INDEX: list[BasenameIndex] = []  # of the last file list (an edit keeps the list)


def basename_index(files: list[str]) -> BasenameIndex:
    if _INDEX and _INDEX[0].files is files:
        return _INDEX[0]
    index = BasenameIndex(files)
    _INDEX[:] = [index]
    return index


def frames_lane(files: list[str], text: str, is_test: np.ndarray) -> FloatArray:
    """Per file id, the weight of the traceback frames naming it (module doc)."""
    lane = np.zeros(len(files))
    groups = frame_paths(text) if "File" in text or ":" in text else []
    if not groups:
        return lane
    index = basename_index(files)
    for paths in groups:
        resolved = [fids for fids in map(index.resolve, paths) if fids]
        for distance, fids in enumerate(reversed(resolved)):
            for fid in fids:
                lane[fid] += DECAY**distance / len(fids)
    return np.where(is_test, 0.0, lane)
