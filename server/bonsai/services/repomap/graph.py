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

The graph depends only on the tags, so it is built once per change and ranked
per request with a different personalization.
"""

from __future__ import annotations

import builtins
from collections import Counter
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from bonsai.core.pagerank import FloatArray, IntArray
from bonsai.services.repomap.models import FileTags

COMMON_DEFINERS = 5
UBIQUITOUS_MIN_FILES = 20  # a plain name used by this many files...
UBIQUITOUS_SHARE = 0.10  # ...and by this share of all files is noise
BUILTIN_DAMPING = 0.05
PYTHON_BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_"))


class RefEdges(NamedTuple):
    """The file -> identifier edges, kept per file so one file can be replaced."""

    offsets: IntArray  # file i's edges are [offsets[i], offsets[i + 1])
    nodes: IntArray  # identifier node of each edge
    factor: FloatArray  # sqrt(use count) x builtin damping, per edge
    users: dict[str, int]  # identifier -> number of files using it
    static: FloatArray  # ident_weight per identifier (index node - F)


class RepoGraph(NamedTuple):
    files: list[str]  # node i (0 <= i < F) is files[i]; sorted
    file_index: dict[str, int]
    idents: list[str]  # node F + j is idents[j]; sorted
    ident_index: dict[str, int]
    definers: dict[str, tuple[int, ...]]  # identifier -> defining file ids
    refs: RefEdges
    sources: IntArray
    targets: IntArray
    weights: FloatArray
    tags: Mapping[str, FileTags]

    @property
    def n_nodes(self) -> int:
        return len(self.files) + len(self.idents)


def is_specific(name: str) -> bool:
    """snake_case, kebab-case or camelCase: a name that says something."""
    if name.lower() == name.upper():
        return False  # no letters at all
    mixed_case = not name.islower() and not name.isupper()
    return mixed_case or "_" in name.strip("_") or "-" in name


def ident_weight(name: str, n_definers: int, n_users: int = 0, n_files: int = 0) -> float:
    """Static weight of an identifier as a reference target: aider's heuristic,
    plus damping of plain names (``len``, ``get``) used all over the repository."""
    weight = 1.0
    if len(name) >= 8 and is_specific(name):
        weight *= 10.0
    if name.startswith("_"):
        weight *= 0.1
    if n_definers > COMMON_DEFINERS:
        weight *= 0.1
    ubiquitous = n_users >= UBIQUITOUS_MIN_FILES and n_users > UBIQUITOUS_SHARE * n_files
    if ubiquitous and not is_specific(name):
        weight *= 0.1
    return weight


def _definers(tags: Mapping[str, FileTags], files: list[str]) -> dict[str, list[int]]:
    """identifier -> ids of the files defining it (ascending, no repeats)."""
    out: dict[str, list[int]] = {}
    for fid, path in enumerate(files):
        for name in dict.fromkeys(d.name for d in tags[path].definitions):
            out.setdefault(name, []).append(fid)
    return out


_NO_INTS: IntArray = np.zeros(0, dtype=np.int64)
_NO_FLOATS: FloatArray = np.zeros(0, dtype=np.float64)


def file_segment(ft: FileTags, ident_index: Mapping[str, int]) -> tuple[IntArray, FloatArray]:
    """One file's reference edges: identifier nodes and their weight factors."""
    refs = ft.references
    if not refs:
        return _NO_INTS, _NO_FLOATS
    nodes = np.fromiter((ident_index.get(n, -1) for n in refs), np.int64, len(refs))
    factor = np.sqrt(np.fromiter(refs.values(), np.float64, len(refs)))
    if ft.language == "python":
        builtin = np.fromiter((n in PYTHON_BUILTINS for n in refs), bool, len(refs))
        factor = np.where(builtin, BUILTIN_DAMPING * factor, factor)
    keep = nodes >= 0
    return nodes[keep], factor[keep]


def static_weights(
    idents: list[str], definers: Mapping[str, tuple[int, ...]], users: Mapping[str, int], n: int
) -> FloatArray:
    return np.fromiter(
        (ident_weight(name, len(definers[name]), users.get(name, 0), n) for name in idents),
        np.float64,
        len(idents),
    )


def _definition_edges(
    n_files: int, idents: list[str], definers: Mapping[str, tuple[int, ...]]
) -> tuple[IntArray, IntArray]:
    sizes = np.fromiter((len(definers[name]) for name in idents), np.int64, len(idents))
    def_src = np.repeat(np.arange(n_files, n_files + len(idents), dtype=np.int64), sizes)
    def_dst = np.fromiter(
        (f for name in idents for f in definers[name]), np.int64, int(sizes.sum())
    )
    return def_src, def_dst


def assemble(
    files: list[str],
    idents: list[str],
    definers: dict[str, tuple[int, ...]],
    refs: RefEdges,
    tags: Mapping[str, FileTags],
    same_idents_as: RepoGraph | None = None,
) -> RepoGraph:
    """Edge arrays from the parts: reference edges then definition edges.
    ``same_idents_as``: a graph with the same files and definers, whose indexes
    and definition edges are reused."""
    n_files = len(files)
    counts = np.diff(refs.offsets)
    ref_src = np.repeat(np.arange(n_files, dtype=np.int64), counts)
    ref_w = refs.static[refs.nodes - n_files] * refs.factor
    if same_idents_as is None:
        file_index = {p: i for i, p in enumerate(files)}
        ident_index = {name: n_files + j for j, name in enumerate(idents)}
        def_src, def_dst = _definition_edges(n_files, idents, definers)
    else:
        old = same_idents_as
        file_index, ident_index = old.file_index, old.ident_index
        split = len(old.refs.nodes)
        def_src, def_dst = old.sources[split:], old.targets[split:]
    return RepoGraph(
        files,
        file_index,
        idents,
        ident_index,
        definers,
        refs,
        np.concatenate([ref_src, def_src]),
        np.concatenate([refs.nodes, def_dst]),
        np.concatenate([ref_w, np.ones(len(def_src))]),
        tags,
    )


def build_graph(tags: Mapping[str, FileTags]) -> RepoGraph:
    """Build the graph over all files in ``tags`` (files without tags are nodes too)."""
    files = sorted(tags)
    definers = {k: tuple(v) for k, v in _definers(tags, files).items()}
    idents = sorted(definers)
    ident_index = {name: len(files) + j for j, name in enumerate(idents)}
    segments = [file_segment(tags[p], ident_index) for p in files]
    users: Counter[str] = Counter()
    for path in files:
        users.update(tags[path].references.keys())
    refs = RefEdges(
        np.concatenate([[0], np.cumsum([len(s[0]) for s in segments])]).astype(np.int64),
        np.concatenate([_NO_INTS, *(s[0] for s in segments)]),
        np.concatenate([_NO_FLOATS, *(s[1] for s in segments)]),
        dict(users),
        static_weights(idents, definers, users, len(files)),
    )
    return assemble(files, idents, definers, refs, tags)
