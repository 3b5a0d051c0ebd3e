"""The reference graph: files point at the identifiers they use, identifiers point
at the files that define them.

Routing references through one node per identifier (instead of aider's edge from
every referencing file to every defining file) keeps the graph linear in the
number of (file, identifier) references, and splits an identifier's weight
evenly among its definers, which damps names defined all over the repository.
On top, the identifier weight follows aider: long snake/camel/kebab names count
10×, private names 0.1×, names defined in more than five files 0.1×, and the
number of uses counts by its square root. Plain names used by a tenth of all
files are damped 10×, and a Python file's use of a builtin name (``len``,
``open``) 20×: it almost never means a definition in the repository.

The graph is kept in two layers:

* ``GraphCore``: flat arrays over every *name* (defined or only referenced, in
  sorted order) and per-file segments of references and definitions. It depends
  only on the tags, is patched per edited file (``graph_patch.py``) and is what
  ``graph_store.py`` persists next to the tag cache.
* ``RepoGraph``: the ranking view derived from a core by a few vectorised passes
  (node numbering, weights, edge arrays, the definition table). Node ``i < F``
  is ``files[i]``; node ``F + j`` is the j-th *defined* name in sorted order.
  The derivation is the same for a built, patched or loaded core, so the arrays
  are identical whichever way the core was obtained.
"""

from __future__ import annotations

import builtins
import hashlib
from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from bonsai.core.repomap.pagerank import (
    FloatArray,
    IntArray,
    Transition,
    bipartite_of_shares,
    transition,
)
from bonsai.services.repomap.postings import Postings
from bonsai.services.repomap.records import Definition, FileTags

BoolArray = npt.NDArray[np.bool_]
# the files' word ids: 32 bits (a vocabulary is far below 2**31 words), half the
# memory of the largest array of a core and half the copy when a patch splices it
WordIds = npt.NDArray[np.int32]

COMMON_DEFINERS = 5
UBIQUITOUS_MIN_FILES = 20  # a plain name used by this many files...
UBIQUITOUS_SHARE = 0.10  # ...and by this share of all files is noise
BUILTIN_DAMPING = 0.05
PYTHON_BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_"))
NO_NAME = -1  # name id of a file-only row (a file without definitions)


def is_specific(name: str) -> bool:
    """snake_case, kebab-case or camelCase: a name that says something."""
    if name.lower() == name.upper():
        return False  # no letters at all
    mixed_case = not name.islower() and not name.isupper()
    return mixed_case or "_" in name.strip("_") or "-" in name


def name_factor(name: str) -> float:
    """The part of an identifier's weight that depends on the name alone."""
    weight = 1.0
    if len(name) >= 8 and is_specific(name):
        weight *= 10.0
    if name.startswith("_"):
        weight *= 0.1
    return weight


class GraphCore(NamedTuple):
    """Everything the graph is derived from. Segment arrays: file i's references
    are ``[ref_offsets[i], ref_offsets[i + 1])``, its definition rows likewise
    (a file without definitions has one row with name ``NO_NAME``). ``names`` is
    sorted; it may hold names nothing uses any more (harmless, see module doc)."""

    files: list[str]
    names: list[str]
    name_factor: FloatArray
    name_specific: BoolArray
    ref_offsets: IntArray
    ref_names: IntArray
    ref_factor: FloatArray  # sqrt(use count) x builtin damping
    def_offsets: IntArray
    def_names: IntArray
    def_lines: IntArray
    # the files' words (``words.py``): ``words`` sorted, file i's word ids are
    # ``word_ids[word_offsets[i]:word_offsets[i + 1]]``
    words: list[str] = []  # noqa: RUF012 - replaced, never mutated
    word_offsets: IntArray = np.zeros(1, dtype=np.int64)
    word_ids: WordIds = np.zeros(0, dtype=np.int32)

    def name_id(self, name: str) -> int:
        """Id of ``name`` in ``names``, or -1."""
        i = bisect_left(self.names, name)
        return i if i < len(self.names) and self.names[i] == name else -1


class FileSegments(NamedTuple):
    """One file's rows in a ``GraphCore``, with names still as strings."""

    ref_names: list[str]
    ref_factor: FloatArray
    def_names: list[str | None]
    def_lines: IntArray


def file_segments(ft: FileTags) -> FileSegments:
    """The reference and definition rows of one file, in tag order."""
    refs = ft.references
    factor = np.sqrt(np.fromiter(refs.values(), np.float64, len(refs)))
    if ft.language == "python" and refs:
        builtin = np.fromiter((n in PYTHON_BUILTINS for n in refs), bool, len(refs))
        factor = np.where(builtin, BUILTIN_DAMPING * factor, factor)
    defs: Sequence[Definition | None] = ft.definitions or (None,)
    return FileSegments(
        list(refs),
        factor,
        [None if d is None else d.name for d in defs],
        np.fromiter((0 if d is None else d.line for d in defs), np.int64, len(defs)),
    )


def _offsets(sizes: Sequence[int] | IntArray) -> IntArray:
    return np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]).astype(np.int64)


def build_core(tags: Mapping[str, FileTags]) -> GraphCore:
    """The core over all files in ``tags`` (files without tags are nodes too)."""
    files = sorted(tags)
    segments = [file_segments(tags[p]) for p in files]
    all_names: set[str] = set()
    for seg in segments:
        all_names.update(seg.ref_names)
        all_names.update(n for n in seg.def_names if n is not None)
    names = sorted(all_names)
    ids = dict(zip(names, range(len(names)), strict=True))
    ref_names = [n for seg in segments for n in seg.ref_names]
    def_names = [n for seg in segments for n in seg.def_names]
    words = sorted({w for p in files for w in tags[p].words})
    word_id = dict(zip(words, range(len(words)), strict=True))
    file_word_ids = [w for p in files for w in tags[p].words]
    return GraphCore(
        files,
        names,
        np.fromiter(map(name_factor, names), np.float64, len(names)),
        np.fromiter(map(is_specific, names), bool, len(names)),
        _offsets([len(s.ref_names) for s in segments]),
        np.fromiter(map(ids.__getitem__, ref_names), np.int64, len(ref_names)),
        np.concatenate([np.zeros(0), *(s.ref_factor for s in segments)]),
        _offsets([len(s.def_names) for s in segments]),
        np.fromiter((NO_NAME if n is None else ids[n] for n in def_names), np.int64),
        np.concatenate([np.zeros(0, np.int64), *(s.def_lines for s in segments)]),
        words,
        _offsets([len(tags[p].words) for p in files]),
        np.fromiter(map(word_id.__getitem__, file_word_ids), np.int32, len(file_word_ids)),
    )


class DefTable(NamedTuple):
    """One row per definition, plus one row per file without definitions; file
    i's rows are ``[offsets[i], offsets[i + 1])``."""

    fid: IntArray
    node: IntArray  # identifier node, -1 for a file-only row
    ndef: FloatArray  # number of files defining the identifier (1 for file rows)
    line: IntArray
    offsets: IntArray


def static_weights(
    name_factor: FloatArray,
    name_specific: BoolArray,
    n_definers: IntArray,
    n_users: IntArray,
    n_files: int,
) -> FloatArray:
    """Identifier weights: ``name_factor``, then the definer and ubiquity damping
    (the same multiplication order for every identifier, so weights computed for
    a few names equal those computed for all, bit for bit)."""
    weight = name_factor * np.where(n_definers > COMMON_DEFINERS, 0.1, 1.0)
    ubiquitous = (n_users >= UBIQUITOUS_MIN_FILES) & (n_users > UBIQUITOUS_SHARE * n_files)
    return weight * np.where(ubiquitous & ~name_specific, 0.1, 1.0)


class Counts(NamedTuple):
    """The per-name arrays a view starts from: definer pairs (sorted by name then
    file), definer and user counts and identifier weights. Derived from a core
    (``RepoGraph``), or patched from the previous view's (``view_patch.py``)."""

    pair_name: IntArray
    pair_fid: IntArray
    n_definers: IntArray
    n_users: IntArray
    static: FloatArray


class RefEdges(NamedTuple):
    """A view's file -> identifier edges; file i's are ``[offsets[i], offsets[i + 1])``.
    ``shares``: the transition's shares and dangling nodes of these edges, when a
    patch carried them over (``view_patch.py``)."""

    sources: IntArray
    targets: IntArray
    weights: FloatArray
    offsets: IntArray
    shares: tuple[FloatArray, IntArray] | None = None


class DefEdges(NamedTuple):
    """A view's identifier -> file edges (one per definer pair), which follow the
    reference edges in the view's edge arrays; ``n_definers``: the view's per
    name, which the pairs' shares divide by (``definer_shares``)."""

    sources: IntArray
    targets: IntArray
    weights: FloatArray
    n_definers: IntArray | None = None
    pair_name: IntArray | None = None


def joined_edges(
    src: Sequence[IntArray],
    tgt: Sequence[IntArray],
    wts: Sequence[FloatArray],
    offsets: IntArray,
    tail: DefEdges,
    shares: tuple[Sequence[FloatArray], IntArray] | None = None,
) -> RefEdges:
    """The whole edge arrays: the reference edges' parts, then ``tail``, each
    joined by one concatenation (``offsets``: the reference edges' per file).
    ``shares``: the reference edges' transition shares, in the same parts, and
    the dangling files; the definition edges' shares are added here."""
    joined = None
    if shares is not None:
        parts, dangling = shares
        share = np.concatenate([*parts, definer_shares(tail)]).astype(np.float64, copy=False)
        joined = (share, dangling)
    return RefEdges(
        np.concatenate([*src, tail.sources]).astype(np.int64, copy=False),
        np.concatenate([*tgt, tail.targets]).astype(np.int64, copy=False),
        np.concatenate([*wts, tail.weights]).astype(np.float64, copy=False),
        offsets,
        joined,
    )


def definer_shares(tail: DefEdges) -> FloatArray:
    """The transition's shares of the definition edges: an identifier's rank
    goes to its definers evenly (its out-weight is its number of definers, a
    sum of ones: exact, so this division is the one ``transition`` makes)."""
    if not len(tail.sources):
        return np.zeros(0)
    if tail.n_definers is not None and tail.pair_name is not None:
        # an identifier's out-edges are its definer pairs: their count is its
        # name's definers (the same integer the count below finds)
        given: FloatArray = tail.weights / tail.n_definers[tail.pair_name]
        return given
    local = tail.sources - int(tail.sources.min())
    result: FloatArray = tail.weights / np.bincount(local)[local]
    return result


class RepoGraph:
    """The ranking view of a ``GraphCore`` (see module doc); immutable."""

    def __init__(
        self,
        core: GraphCore,
        tags: Mapping[str, FileTags],
        file_index: dict[str, int] | None = None,
        counts: Counts | None = None,
        ref_edges: Callable[[RepoGraph, DefEdges], RefEdges | None] | None = None,
    ) -> None:
        """``file_index``: the index of ``core.files`` when the caller has it (a
        patch keeps the files); ``counts``: this core's, when a patch has them;
        ``ref_edges``: makes the whole edge arrays — the reference edges from the
        node numbers, then the given definition edges (a patch splices the
        previous view's; None from it: derive them)."""
        self.core = core
        self.tags = tags
        self._last: LastRank | None = None  # the last PageRank (``last_rank``)
        # ranks of the graph this one was patched from, renumbered (``rank_carry.py``)
        self.warm_start: FloatArray | None = None
        self.last_ranked: Any = None  # ``ranking.RankMemo`` of the last request
        # the files of each word a request looked up (``postings.py``; a patch
        # hands its successor a patched copy)
        self.postings = Postings(core)
        self._name_ids: dict[str, int] = {}  # names looked up: a request asks ~5x each
        self.files = core.files
        self.file_index = file_index or {p: i for i, p in enumerate(core.files)}
        n_files = len(core.files)
        row_fid = np.repeat(np.arange(n_files, dtype=np.int64), np.diff(core.def_offsets))
        self.counts = counts or derive_counts(core, row_fid, core.def_names >= 0)
        self.pair_name, self.pair_fid, self.n_definers, self.n_users, self.static = self.counts
        # per name, with one more entry at the end that a file-only row's name id,
        # -1, reads: its node (-1) and its definers (1), so the definition table's
        # columns are one gather each, without a mask
        n_names = len(self.n_definers)
        defined = self.n_definers > 0
        node_ext = np.empty(n_names + 1, dtype=np.int64)
        numbers = node_ext[:n_names]  # the j-th defined name is node n_files + j - 1
        np.cumsum(defined, dtype=np.int64, out=numbers)
        self.n_nodes = n_files + (int(numbers[-1]) if n_names else 0)
        numbers += n_files - 1
        numbers[~defined] = -1
        node_ext[n_names] = -1
        self.node_of_name = numbers
        def_src = numbers[self.pair_name]
        tail = DefEdges(
            def_src, self.pair_fid, np.ones(len(def_src)), self.n_definers, self.pair_name
        )
        whole = None if ref_edges is None else ref_edges(self, tail)
        whole = self._ref_edges(n_files, tail) if whole is None else whole
        self.sources, self.targets, self.weights = whole.sources, whole.targets, whole.weights
        self._shares = whole.shares  # the transition's, when a patch carried them over
        self.n_ref_edges = n_ref = int(whole.offsets[-1])  # file -> identifier edges
        self.ref_edges = RefEdges(  # views into the whole edge arrays: no second copy
            self.sources[:n_ref], self.targets[:n_ref], self.weights[:n_ref], whole.offsets
        )
        ndef_ext = np.empty(n_names + 1, dtype=np.float64)
        ndef_ext[:n_names] = self.n_definers
        ndef_ext[n_names] = 1.0
        self.table = DefTable(
            row_fid,
            node_ext[core.def_names],
            ndef_ext[core.def_names],
            core.def_lines,
            core.def_offsets,
        )

    def _ref_edges(self, n_files: int, tail: DefEdges) -> RefEdges:
        """The whole edge arrays: reference edges (file order, then tag order),
        then the definition edges ``tail``."""
        core = self.core
        ref_node = self.node_of_name[core.ref_names]
        keep = np.flatnonzero(ref_node >= 0)  # indices: np.take beats a boolean mask
        ref_fid = np.repeat(np.arange(n_files, dtype=np.int64), np.diff(core.ref_offsets))
        ref_src = ref_fid.take(keep)  # a take beats a binary search per reference
        ref_w = self.static[core.ref_names.take(keep)] * core.ref_factor.take(keep)
        per_file = np.bincount(ref_src, minlength=n_files)
        offsets = np.concatenate([[0], np.cumsum(per_file)]).astype(np.int64, copy=False)
        return joined_edges([ref_src], [ref_node.take(keep)], [ref_w], offsets, tail)

    def relined(self, core: GraphCore) -> RepoGraph:
        """This view for ``core``, which differs from ours in definition lines
        at most (``same_structure``): every derived array is shared, and so is
        the last ranking, which an equal personalization then reuses."""
        view = object.__new__(RepoGraph)
        view.__dict__.update(self.__dict__)  # the edges, and the transition once made
        view.core = core
        view.table = self.table._replace(line=core.def_lines)
        view.warm_start = self.last_ranks
        return view

    # -- the last ranking --------------------------------------------------------

    @property
    def last_rank(self) -> tuple[str, FloatArray] | None:
        """(personalization key, ranks) of the last PageRank of this graph (what
        the snapshot keeps); the key is hashed when first read."""
        return None if self._last is None else self._last.pair()

    @last_rank.setter
    def last_rank(self, value: tuple[str, FloatArray] | None) -> None:
        self._last = None if value is None else LastRank(value[1], key=value[0])

    @property
    def last_ranks(self) -> FloatArray | None:
        """The last PageRank vector, without its key."""
        return None if self._last is None else self._last.ranks

    def remember_rank(self, personalization: FloatArray, ranks: FloatArray) -> None:
        self._last = LastRank(ranks, personalization)

    def ranks_for(self, personalization: FloatArray) -> FloatArray | None:
        """The last PageRank vector if it was computed for this personalization."""
        return None if self._last is None else self._last.ranks_for(personalization)

    @cached_property
    def transition(self) -> Transition:
        split = len(self.files)
        if self._shares is not None and 0 < split < self.n_nodes:
            share, dangling = self._shares  # laid out by ``joined_edges``: references first
            n_ref = self.n_ref_edges
            return bipartite_of_shares(
                self.n_nodes, self.sources, self.targets, share, dangling, split, n_ref
            )
        return transition(self.n_nodes, self.sources, self.targets, self.weights, split=split)

    # -- lookups --------------------------------------------------------------

    def name_id(self, name: str) -> int:
        """``GraphCore.name_id``, remembered (the graph never changes)."""
        nid = self._name_ids.get(name)
        if nid is None:
            nid = self._name_ids[name] = self.core.name_id(name)
        return nid

    def carry_name_ids(self, old: RepoGraph, fresh: list[str]) -> None:
        """Take over ``old``'s remembered name ids, for a core patched from
        ``old``'s by adding the sorted names ``fresh`` (a patch never drops a
        name): an old name's id grows by the fresh names before it."""
        if len(self.core.names) != len(old.core.names) + len(fresh):
            return
        if not fresh:
            self._name_ids = dict(old._name_ids)
            return
        new = set(fresh)
        self._name_ids = {
            name: nid if nid < 0 else nid + bisect_left(fresh, name)
            for name, nid in old._name_ids.items()
            if name not in new
        }

    def node(self, name: str) -> int | None:
        """Node of a defined identifier, else None."""
        nid = self.name_id(name)
        if nid < 0 or self.n_definers[nid] == 0:
            return None
        return int(self.node_of_name[nid])

    def definers(self, name: str) -> tuple[int, ...]:
        """Ids of the files defining ``name`` (ascending)."""
        nid = self.name_id(name)
        if nid < 0 or self.n_definers[nid] == 0:
            return ()
        lo, hi = np.searchsorted(self.pair_name, [nid, nid + 1])
        return tuple(self.pair_fid[lo:hi].tolist())

    def uses_of(self, fid: int) -> tuple[IntArray, FloatArray]:
        """The identifier nodes file ``fid`` points at, with the edge weights."""
        lo, hi = np.searchsorted(self.sources[: self.n_ref_edges], [fid, fid + 1])
        return self.targets[lo:hi], self.weights[lo:hi]

    def n_definers_of(self, name: str) -> int:
        nid = self.name_id(name)
        return 0 if nid < 0 else int(self.n_definers[nid])

    @property
    def defined(self) -> DefinedNames:
        """Membership view of the defined names (not cached: a cached view would
        make a reference cycle and keep replaced graphs alive until a GC pass)."""
        return DefinedNames(self)

    @cached_property
    def idents(self) -> list[str]:
        """Defined names in node order (node ``F + j`` is ``idents[j]``)."""
        names = self.core.names
        return [names[i] for i in np.flatnonzero(self.n_definers > 0).tolist()]

    def definition(self, row: int) -> Definition | None:
        """The definition of a table row (None for a file-only row)."""
        if self.core.def_names[row] < 0:
            return None
        fid = int(self.table.fid[row])
        return self.tags[self.files[fid]].definitions[row - int(self.table.offsets[fid])]


def personalization_key(personalization: FloatArray) -> str:
    """The key a ranking is kept under (in the snapshot too): a hash of the bytes."""
    return hashlib.blake2b(personalization.tobytes(), digest_size=16).hexdigest()


class LastRank:
    """A graph's last PageRank vector with the personalization it was computed
    for: kept as the array itself, so the next request compares arrays (one
    pass) instead of hashing them (~5x that), and hashed only when its key is
    read (a snapshot saved, a loaded snapshot's key compared). Shared by the
    relined copies of a view, so each sees the same (key, ranks) pair."""

    __slots__ = ("_pair", "key", "personalization", "ranks")

    def __init__(
        self, ranks: FloatArray, personalization: FloatArray | None = None, key: str | None = None
    ) -> None:
        self.ranks = ranks
        self.personalization = personalization
        self.key = key
        self._pair: tuple[str, FloatArray] | None = None

    def pair(self) -> tuple[str, FloatArray]:
        if self._pair is None:
            if self.key is None:
                assert self.personalization is not None
                self.key = personalization_key(self.personalization)
            self._pair = (self.key, self.ranks)
        return self._pair

    def ranks_for(self, personalization: FloatArray) -> FloatArray | None:
        kept = self.personalization
        if kept is not None:
            same = kept.shape == personalization.shape and np.array_equal(kept, personalization)
            return self.ranks if same else None
        if self.key == personalization_key(personalization):  # a loaded snapshot's
            self.personalization = personalization
            return self.ranks
        return None


class DefinedNames:
    """``name in graph.defined``: does the repository define ``name``?"""

    def __init__(self, graph: RepoGraph) -> None:
        self._graph = graph

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._graph.node(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._graph.idents)


def derive_counts(core: GraphCore, row_fid: IntArray, named_rows: BoolArray) -> Counts:
    """A core's ``Counts`` from all its rows (``row_fid``: the file of each
    definition row; ``named_rows``: the rows with a name)."""
    n_files, n_names = len(core.files), len(core.names)
    # (name, file) definer pairs, sorted by name then file, without repeats
    keys = np.sort(core.def_names[named_rows] * max(1, n_files) + row_fid[named_rows])
    keys = keys[np.r_[True, keys[1:] != keys[:-1]]] if len(keys) else keys
    pair_name, pair_fid = np.divmod(keys, max(1, n_files))
    n_definers = np.bincount(pair_name, minlength=n_names)
    n_users = np.bincount(core.ref_names, minlength=n_names)
    static = static_weights(core.name_factor, core.name_specific, n_definers, n_users, n_files)
    return Counts(pair_name, pair_fid, n_definers, n_users, static)


def same_structure(old: GraphCore, new: GraphCore) -> bool:
    """Do the two cores give the same ranking view (files, names, references
    with their weights, and definitions all equal; lines and words may differ)?"""
    return (
        old.files is new.files
        and old.names is new.names
        and np.array_equal(old.ref_offsets, new.ref_offsets)
        and np.array_equal(old.def_offsets, new.def_offsets)
        and np.array_equal(old.ref_names, new.ref_names)
        and np.array_equal(old.def_names, new.def_names)
        and np.array_equal(old.ref_factor, new.ref_factor)
    )


def build_graph(tags: Mapping[str, FileTags]) -> RepoGraph:
    """Build the graph over all files in ``tags``."""
    return RepoGraph(build_core(tags), tags)
