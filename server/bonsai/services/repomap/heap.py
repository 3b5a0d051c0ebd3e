"""Readying the process for the first edit after a warm start or a build.

Two costs fell on the first edit of a session, not on later ones:

* **a collection of what the warm start made.** The warm start leaves ~60,000
  long-lived container objects (the tags' rows, the name tables, the word
  parts); a full collection scans them all (30–37 ms CPU on a 2,400-file
  repository at load ~10) though none is garbage, and the allocations of an
  edit, or of the daemon's requests, trigger one now and then. :func:`settle`
  (called by a long-lived service, ``RepoMapService.keep_for_edits``) moves
  them to the permanent generation (``gc.freeze``, Python's documented use for
  long-lived data; instant): later collections scan only what was made since.
  Frozen objects are still freed by reference counting when released (a
  replaced view is); only the cycle collector skips them. No collection first:
  it would cost those 30 ms in the warm start, and the warm start leaves no
  cyclic garbage to free (0 objects, measured).
* **fresh heap for the second view.** An edit derives the new view while the
  old one is alive, so the first edit is the first time two views exist: its
  ~10 MB of arrays (on a 2,400-file repository) come from memory the process
  never touched, ~3,000 page faults, ~10 ms. Later edits reuse the replaced
  view's freed memory and fault ~150 times. With glibc, :func:`settle` touches
  that much heap once and keeps it (``mallopt``: arrays up to 32 MB from the
  heap, glibc's own ceiling for its adaptive threshold, and freed memory kept up
  to the reserve), so the first edit finds it ready. The faults move to
  the end of the warm start, after its map is made; nothing else changes.
  The reserve is twice the bytes of the view and its core
  (``EDIT_ALLOCATION_FACTOR``): an edit that adds a name never seen before
  makes a new core as well as a new view (every name id moves), and the
  temporaries of both, while the old ones are alive. One view's worth left
  2,370-2,550 faults (~10 ms) in that first edit on the stdlib copy; twice,
  6 (seventh round). At most ``MAX_RESERVE`` is kept.
"""

from __future__ import annotations

import ctypes
import gc
import platform
import sys
from typing import Any

import numpy as np

_M_TRIM_THRESHOLD = -1  # glibc's mallopt parameters (malloc.h)
_M_MMAP_THRESHOLD = -3
_MMAP_CEILING = 32 << 20  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit
_CHUNK = 1 << 20
EDIT_ALLOCATION_FACTOR = 2  # an edit's new arrays and temporaries, in views (module doc)
MAX_RESERVE = 64 << 20
_kept = 0  # the heap kept so far (the largest reserve asked for)


def array_bytes(*holders: object) -> int:
    """Bytes of the numpy arrays these objects hold (their attributes, or their
    items for a named tuple, and the tuples among those, one level deep), each
    buffer counted once."""
    buffers: dict[int, int] = {}
    for holder in holders:
        values = tuple(holder) if isinstance(holder, tuple) else tuple(vars(holder).values())
        for value in values:
            items: tuple[Any, ...] = value if isinstance(value, tuple) else (value,)
            for item in items:
                if isinstance(item, np.ndarray):
                    owner = item if item.base is None else item.base
                    buffers[id(owner)] = getattr(owner, "nbytes", item.nbytes)
    return sum(buffers.values())


def _glibc_mallopt() -> Any | None:
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        return None
    try:
        return ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return None


def reserve(nbytes: int) -> bool:
    """Touch ``nbytes`` of heap once and keep it for later arrays (glibc only;
    False elsewhere, where nothing is done)."""
    global _kept
    mallopt = _glibc_mallopt()
    if mallopt is None or nbytes <= 0:
        return False
    if nbytes + _CHUNK > _kept:
        mallopt(_M_MMAP_THRESHOLD, _MMAP_CEILING)
        mallopt(_M_TRIM_THRESHOLD, nbytes + _CHUNK)
        _kept = nbytes + _CHUNK
    chunks = []
    for _ in range(-(-nbytes // _CHUNK)):
        chunk = np.empty(_CHUNK, np.uint8)
        chunk.fill(1)  # np.zeros would not touch fresh pages (calloc)
        chunks.append(chunk)
    del chunks
    return True


def settle(view_bytes: int = 0) -> None:
    """Freeze what is alive, and keep touched heap for the next edit's arrays:
    ``EDIT_ALLOCATION_FACTOR`` times ``view_bytes`` (the bytes of the view and
    its core), at most ``MAX_RESERVE`` (see the module doc)."""
    gc.freeze()
    reserve(min(EDIT_ALLOCATION_FACTOR * view_bytes, MAX_RESERVE))
