"""Update the graph core after edits to existing files without rebuilding it.

Every change patches: an edited file's reference and definition segments are
replaced, a new file's are inserted at its sorted place, a removed file's are
dropped, and names never seen before are merged into the sorted name list
(existing name ids shift; the segment arrays are remapped in one vectorised
pass). The core stores no file ids or node ids, only per-file segments, so a
new file list needs no renumbering. Everything that depends on more than one
file (who defines a name, use counts, weights, node numbering) is derived
afterwards by ``RepoGraph`` exactly as for a fresh build, so a patched graph
equals a freshly built one array for array (tests check the bytes).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection, Mapping

import numpy as np

from bonsai.core.repomap.pagerank import IntArray
from bonsai.services.repomap.graph import (
    NO_NAME,
    FileSegments,
    GraphCore,
    WordIds,
    file_segments,
    is_specific,
    name_factor,
)
from bonsai.services.repomap.records import FileTags

INSERT_MAX_NEW = 8  # up to this many new entries, a list is copied once and inserted into


def _merged(old: list[str], new: set[str]) -> list[str]:
    """``old`` (sorted) with the ``new`` names inserted in order, no sort of the
    whole list. A few go in by ``insert`` into one copy: each slice-and-extend
    would touch every entry's reference count thrice (the slice, the extend, the
    slice's release), and on 62,000 scattered strings that cache-missing pass,
    not the pointer copy, is what costs."""
    if len(new) <= INSERT_MAX_NEW:
        merged = old.copy()
        for k, name in enumerate(sorted(new)):
            merged.insert(bisect_left(old, name) + k, name)
        return merged
    merged = []
    at = 0
    for name in sorted(new):
        i = bisect_left(old, name, at)
        merged += old[at:i]
        merged.append(name)
        at = i
    merged += old[at:]
    return merged


SHIFT_MAX_NEW = 8  # up to this many new ids, a remap is that many compare-and-adds


def shifted(ids: np.ndarray, positions: list[int], old_to_new: np.ndarray) -> np.ndarray:
    """``old_to_new[ids]`` for ids of a sorted list into which new entries went at
    the (new, ascending) ``positions``: an old id grows by the new entries before
    it. A few new entries cost a compare-and-add each, sequential passes cheaper
    than the gather (~4x on 150,000 ids); a negative id (``NO_NAME``) stays as it
    is either way, as no bound is negative (and every id is one when the list
    was empty)."""
    if len(positions) > SHIFT_MAX_NEW and len(old_to_new):
        named = ids >= 0
        return np.where(named, old_to_new[np.where(named, ids, 0)], ids).astype(ids.dtype)
    out = ids.copy()
    for j, position in enumerate(positions):
        out += ids >= position - j  # the first old id past the j-th new entry
    return out


def _merge_names(core: GraphCore, new: set[str]) -> GraphCore:
    """``core`` with ``new`` names merged into the sorted list (ids remapped)."""
    merged = _merged(core.names, new)
    positions = sorted(bisect_left(merged, n) for n in new)
    is_new = np.zeros(len(merged), dtype=bool)
    is_new[positions] = True
    old_to_new = np.flatnonzero(~is_new).astype(np.int64)
    factor = np.empty(len(merged))
    specific = np.empty(len(merged), dtype=bool)
    factor[old_to_new], specific[old_to_new] = core.name_factor, core.name_specific
    for i in positions:
        factor[i], specific[i] = name_factor(merged[i]), is_specific(merged[i])
    return core._replace(
        names=merged,
        name_factor=factor,
        name_specific=specific,
        ref_names=shifted(core.ref_names, positions, old_to_new),
        def_names=shifted(core.def_names, positions, old_to_new),
    )


def _merge_words(core: GraphCore, new: set[str]) -> GraphCore:
    """``core`` with ``new`` words merged into its sorted word list (ids remapped)."""
    merged = _merged(core.words, new)
    positions = sorted(bisect_left(merged, w) for w in new)
    is_new = np.zeros(len(merged), dtype=bool)
    is_new[positions] = True
    old_to_new = np.flatnonzero(~is_new).astype(np.int32)
    return core._replace(words=merged, word_ids=shifted(core.word_ids, positions, old_to_new))


Lookup = dict[str, int]  # name (or word) -> its id in the patched core's sorted list


def _positions(sorted_list: list[str], wanted: set[str]) -> tuple[Lookup, set[str]]:
    """Each wanted entry's insertion point in ``sorted_list`` (one bisect each),
    and those the list lacks."""
    at = {w: bisect_left(sorted_list, w) for w in wanted}
    size = len(sorted_list)
    return at, {w for w, i in at.items() if i >= size or sorted_list[i] != w}


def _ids_after_merge(at: Lookup, fresh: set[str]) -> Lookup:
    """Ids in the list once ``fresh`` entries are merged in: the old entries
    before it plus the fresh ones before it (an old entry's id, or a fresh one's
    place)."""
    if not fresh:
        return at
    order = sorted(fresh)
    return {w: i + bisect_left(order, w) for w, i in at.items()}


def _word_ids(word_id: Lookup, words: tuple[str, ...]) -> WordIds:
    return np.fromiter(map(word_id.__getitem__, words), np.int32, len(words))


def _relined(
    core: GraphCore,
    segments: Mapping[str, FileSegments],
    edited: Mapping[str, FileTags],
    file_index: Mapping[str, int],
    name_id: Lookup,
    word_id: Lookup,
) -> GraphCore | None:
    """The core after edits that kept every file's references (names and counts)
    and definition names, and brought no new word: the same arrays with the
    edited files' lines and words replaced (None when an edit did more)."""
    lines = core.def_lines
    word_ids = core.word_ids
    for path, seg in segments.items():
        fid = file_index.get(path)
        if fid is None:
            return None
        r0, r1 = int(core.ref_offsets[fid]), int(core.ref_offsets[fid + 1])
        d0, d1 = int(core.def_offsets[fid]), int(core.def_offsets[fid + 1])
        ref_ids, def_ids = _ids(name_id, seg)
        if not (
            np.array_equal(ref_ids, core.ref_names[r0:r1])
            and np.array_equal(seg.ref_factor, core.ref_factor[r0:r1])
            and np.array_equal(def_ids, core.def_names[d0:d1])
        ):
            return None
        w0, w1 = int(core.word_offsets[fid]), int(core.word_offsets[fid + 1])
        ids = _word_ids(word_id, edited[path].words)
        if len(ids) != w1 - w0:
            return None
        if not np.array_equal(ids, word_ids[w0:w1]):
            word_ids = word_ids.copy() if word_ids is core.word_ids else word_ids
            word_ids[w0:w1] = ids
        if not np.array_equal(seg.def_lines, lines[d0:d1]):
            lines = lines.copy() if lines is core.def_lines else lines
            lines[d0:d1] = seg.def_lines
    return core._replace(def_lines=lines, word_ids=word_ids)


def _unchanged(
    offsets: IntArray,
    arrays: list[np.ndarray],
    new: Mapping[str, list[np.ndarray]],
    file_index: Mapping[str, int],
) -> bool:
    """Are the new segments of these (existing) files equal to their old ones?"""
    for path, columns in new.items():
        fid = file_index[path]
        lo, hi = int(offsets[fid]), int(offsets[fid + 1])
        for column, array in zip(columns, arrays, strict=True):
            if len(column) != hi - lo or not np.array_equal(column, array[lo:hi]):
                return False
    return True


Run = tuple[int, int] | str  # a run of old file ids [lo, hi), or a file with new tags


def _runs(files: list[str], index: Mapping[str, int], new: Collection[str]) -> list[Run]:
    """The new file list as runs of consecutive old files and single new ones."""
    runs: list[Run] = []
    if len(files) == len(index) and all(p in index for p in new):  # the same files
        at = 0
        for fid in sorted(index[p] for p in new):
            if fid > at:
                runs.append((at, fid))
            runs.append(files[fid])
            at = fid + 1
        if at < len(files):
            runs.append((at, len(files)))
        return runs
    for path in files:
        if path in new:
            runs.append(path)
            continue
        fid = index[path]
        last = runs[-1] if runs else None
        if isinstance(last, tuple) and last[1] == fid:
            runs[-1] = (last[0], fid + 1)
        else:
            runs.append((fid, fid + 1))
    return runs


def _splice(
    offsets: IntArray, arrays: list[np.ndarray], runs: list[Run], new: dict[str, list[np.ndarray]]
) -> tuple[IntArray, list[np.ndarray]]:
    """Segment arrays for the new file list (one array per column)."""
    old_sizes = np.diff(offsets)
    sizes: list[IntArray] = []
    parts: list[list[np.ndarray]] = [[] for _ in arrays]
    for run in runs:
        if isinstance(run, str):
            columns = new[run]
            sizes.append(np.array([len(columns[0])], dtype=np.int64))
        else:
            lo, hi = int(offsets[run[0]]), int(offsets[run[1]])
            columns = [array[lo:hi] for array in arrays]
            sizes.append(old_sizes[run[0] : run[1]])
        for col, column in enumerate(columns):
            parts[col].append(column)
    joined = np.concatenate([np.zeros(0, dtype=np.int64), *sizes])
    new_offsets = np.concatenate([[0], np.cumsum(joined)]).astype(np.int64, copy=False)
    return new_offsets, [
        np.concatenate([a[:0], *p]).astype(a.dtype, copy=False)
        for p, a in zip(parts, arrays, strict=True)
    ]


def _ids(name_id: Lookup, seg: FileSegments) -> tuple[IntArray, IntArray]:
    refs = np.fromiter(map(name_id.__getitem__, seg.ref_names), np.int64, len(seg.ref_names))
    defs = np.fromiter(
        (NO_NAME if n is None else name_id[n] for n in seg.def_names),
        np.int64,
        len(seg.def_names),
    )
    return refs, defs


def patch_core(
    core: GraphCore,
    edited: Mapping[str, FileTags],
    removed: Collection[str] = (),
    file_index: Mapping[str, int] | None = None,
) -> GraphCore:
    """The core after ``edited`` files (changed or new) got these tags and
    ``removed`` files left the map. ``file_index``: of ``core.files``."""
    return patch_core_names(core, edited, removed, file_index)[0]


def patch_core_names(
    core: GraphCore,
    edited: Mapping[str, FileTags],
    removed: Collection[str] = (),
    file_index: Mapping[str, int] | None = None,
) -> tuple[GraphCore, list[str]]:
    """``patch_core`` and the names it added to the name list (sorted), so the
    caller's name indexes grow by those alone."""
    if file_index is None:
        file_index = {p: i for i, p in enumerate(core.files)}
    segments = {p: file_segments(ft) for p, ft in edited.items()}
    seen: set[str] = set()
    for seg in segments.values():
        seen.update(seg.ref_names)
        seen.update(n for n in seg.def_names if n is not None)
    # one bisect per name and per word of the edited files: what is new, and
    # (shifted by the new entries before it) each one's id in the patched core
    names_at, fresh = _positions(core.names, seen)
    words_at, new_words = _positions(core.words, {w for ft in edited.values() for w in ft.words})
    gone = {p for p in removed if p in file_index and p not in edited}
    if not fresh and not new_words and not gone:
        relined = _relined(core, segments, edited, file_index, names_at, words_at)
        if relined is not None:
            return relined, []
    name_id, word_id = _ids_after_merge(names_at, fresh), _ids_after_merge(words_at, new_words)
    if fresh:
        core = _merge_names(core, fresh)
    if new_words:
        core = _merge_words(core, new_words)
    files = core.files
    added = [p for p in edited if p not in file_index]
    if gone or added:
        files = sorted({*(p for p in core.files if p not in gone), *added})
    runs = _runs(files, file_index, segments)
    refs: dict[str, list[np.ndarray]] = {}
    defs: dict[str, list[np.ndarray]] = {}
    words: dict[str, list[np.ndarray]] = {}
    for path, seg in segments.items():
        ref_ids, def_ids = _ids(name_id, seg)
        refs[path] = [ref_ids, seg.ref_factor]
        defs[path] = [def_ids, seg.def_lines]
        words[path] = [_word_ids(word_id, edited[path].words)]
    same = files is core.files

    def splice(
        offsets: IntArray, arrays: list[np.ndarray], new: dict[str, list[np.ndarray]]
    ) -> tuple[IntArray, list[np.ndarray]]:
        if same and _unchanged(offsets, arrays, new, file_index):
            return offsets, arrays  # no copy of every file's rows for an equal segment
        return _splice(offsets, arrays, runs, new)

    ref_offsets, (ref_names, ref_factor) = splice(
        core.ref_offsets, [core.ref_names, core.ref_factor], refs
    )
    def_offsets, (def_names, def_lines) = splice(
        core.def_offsets, [core.def_names, core.def_lines], defs
    )
    word_offsets, (word_ids,) = splice(core.word_offsets, [core.word_ids], words)
    patched = core._replace(
        files=files,
        word_offsets=word_offsets,
        word_ids=word_ids,
        ref_offsets=ref_offsets,
        ref_names=ref_names,
        ref_factor=ref_factor,
        def_offsets=def_offsets,
        def_names=def_names,
        def_lines=def_lines,
    )
    return patched, sorted(fresh)
