"""The built graph, persisted next to the tag cache so a warm start with nothing
changed loads it instead of rebuilding it.

A snapshot is a ``GraphCore`` (plus the last PageRank result and the
personalization it was computed for) as one blob: a JSON header line naming
each array's dtype and length and the CRC-32 of the body, then the raw arrays;
string lists are NUL-joined UTF-8. It is stored under a key that hashes
everything the core depends on: the snapshot format, the weighting constants,
the Python and numpy versions (the builtin names and float arithmetic), and the
path and content hash of every tagged file. A row whose key differs belongs to
another state of the workspace; a row that fails the CRC or the structural
checks is corrupt. Either way it is rebuilt, never trusted.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import operator
import sys
import zlib
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from bonsai.core.repomap.pagerank import FloatArray
from bonsai.services.repomap import graph as graph_module
from bonsai.services.repomap.cache import CachedFile
from bonsai.services.repomap.graph import GraphCore

FORMAT = "bonsai-repomap-graph/2"  # 2: the files' words
_STRINGS = ("files", "names", "words")
_ARRAYS = {  # field -> stored dtype
    "name_factor": "<f8",
    "name_specific": "|b1",
    "ref_offsets": "<i8",
    "ref_names": "<i4",
    "ref_factor": "<f8",
    "def_offsets": "<i8",
    "def_names": "<i4",
    "def_lines": "<i4",
    "word_offsets": "<i8",
    "word_ids": "<i4",
}
_LOADED = {"i": np.int64, "f": np.float64, "b": np.bool_}  # stored kind -> in memory
_KEPT_32 = frozenset({"word_ids"})  # fields kept at 32 bits in memory too (``graph.WordIds``)


class SnapshotError(ValueError):
    """The stored snapshot cannot be trusted (corrupt or inconsistent)."""


class Snapshot(NamedTuple):
    core: GraphCore
    last_rank: tuple[str, FloatArray] | None


def _constants() -> str:
    g = graph_module
    return repr(
        (
            g.COMMON_DEFINERS,
            g.UBIQUITOUS_MIN_FILES,
            g.UBIQUITOUS_SHARE,
            g.BUILTIN_DAMPING,
            sys.version_info[:2],
            np.__version__,
        )
    )


def snapshot_key(rows: Mapping[str, CachedFile]) -> str:
    """Key of the graph of these tag rows (only rows with tags are in the graph)."""
    digest = hashlib.sha256(f"{FORMAT}\n{_constants()}\n".encode())
    for path in sorted(p for p, row in rows.items() if row.status == "tags"):
        digest.update(f"{path}\0{rows[path].sha256}\n".encode())
    return digest.hexdigest()


def encode(snapshot: Snapshot) -> bytes:
    core, last = snapshot
    parts: list[bytes] = []
    layout: list[list[object]] = []
    for field in _STRINGS:
        data = "\0".join(getattr(core, field)).encode()
        parts.append(data)
        layout.append([field, "str", len(data)])
    for field, dtype in _ARRAYS.items():
        data = np.ascontiguousarray(getattr(core, field), dtype=dtype).tobytes()
        parts.append(data)
        layout.append([field, dtype, len(data)])
    rank_key = None
    if last is not None:
        rank_key = last[0]
        parts.append(np.ascontiguousarray(last[1], dtype="<f8").tobytes())
        layout.append(["last_rank", "<f8", len(parts[-1])])
    body = b"".join(parts)
    header = {"format": FORMAT, "layout": layout, "crc": zlib.crc32(body), "rankKey": rank_key}
    return json.dumps(header, separators=(",", ":")).encode() + b"\n" + body


def _split(blob: bytes) -> tuple[dict[str, object], memoryview]:
    newline = blob.find(b"\n")
    if newline < 0:
        raise SnapshotError("no header")
    try:
        header = json.loads(blob[:newline])
    except ValueError as exc:
        raise SnapshotError(f"bad header: {exc}") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise SnapshotError("unknown snapshot format")
    body = memoryview(blob)[newline + 1 :]
    if zlib.crc32(body) != header.get("crc"):
        raise SnapshotError("checksum mismatch")
    return header, body


def decode(blob: bytes) -> Snapshot:
    """The snapshot in ``blob``; raises ``SnapshotError`` when it is not sound."""
    header, body = _split(blob)
    fields: dict[str, object] = {}
    cursor = 0
    try:
        for field, dtype, size in header["layout"]:  # type: ignore[attr-defined]
            chunk = body[cursor : cursor + size]
            cursor += size
            if dtype == "str":
                text = bytes(chunk).decode()
                fields[field] = text.split("\0") if text else []
            else:
                stored = np.frombuffer(chunk, dtype=dtype)
                kept = np.int32 if field in _KEPT_32 else _LOADED[stored.dtype.kind]
                fields[field] = stored.astype(kept)
        last = fields.pop("last_rank", None)
        core = GraphCore(**fields)  # type: ignore[arg-type]
    except (KeyError, TypeError, ValueError) as exc:
        raise SnapshotError(f"bad layout: {exc}") from exc
    if cursor != len(body):
        raise SnapshotError("trailing bytes")
    check_core(core)
    rank_key = header.get("rankKey")
    if last is None or not isinstance(rank_key, str):
        return Snapshot(core, None)
    return Snapshot(core, (rank_key, last))  # type: ignore[arg-type]


def _check_offsets(offsets: np.ndarray, n_files: int, total: int, what: str) -> None:
    if len(offsets) != n_files + 1 or offsets[0] != 0 or offsets[-1] != total:
        raise SnapshotError(f"{what} offsets do not match")
    if n_files and np.any(np.diff(offsets) < 0):
        raise SnapshotError(f"{what} offsets decrease")


def _ascending(seq: list[str]) -> bool:
    """Strictly ascending (sorted, no repeats)."""
    return all(map(operator.lt, seq, itertools.islice(seq, 1, None)))


def check_core(core: GraphCore) -> None:
    """Structural checks: every index in range, segments consistent, names sorted."""
    n_files, n_names = len(core.files), len(core.names)
    if len(core.name_factor) != n_names or len(core.name_specific) != n_names:
        raise SnapshotError("name arrays do not match the names")
    if len(core.ref_factor) != len(core.ref_names):
        raise SnapshotError("reference arrays differ in length")
    if len(core.def_lines) != len(core.def_names):
        raise SnapshotError("definition arrays differ in length")
    _check_offsets(core.ref_offsets, n_files, len(core.ref_names), "reference")
    _check_offsets(core.def_offsets, n_files, len(core.def_names), "definition")
    _check_offsets(core.word_offsets, n_files, len(core.word_ids), "word")
    if core.word_ids.size and (core.word_ids.min() < 0 or core.word_ids.max() >= len(core.words)):
        raise SnapshotError("an unknown word")
    if core.ref_names.size and (core.ref_names.min() < 0 or core.ref_names.max() >= n_names):
        raise SnapshotError("reference to an unknown name")
    if core.def_names.size and (core.def_names.min() < -1 or core.def_names.max() >= n_names):
        raise SnapshotError("definition of an unknown name")
    if not np.all(np.isfinite(core.ref_factor)) or not np.all(np.isfinite(core.name_factor)):
        raise SnapshotError("weights are not finite")
    if not (_ascending(core.files) and _ascending(core.names) and _ascending(core.words)):
        raise SnapshotError("files or names are not sorted")
