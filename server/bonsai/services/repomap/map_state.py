"""Mutable state of one ``RepoMapService``: the tags, the graph (patched after
edits, loaded from or saved to its snapshot) and the render step that consults
the stability rule before producing new text."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import partial
from typing import Any, Literal, NamedTuple, Protocol

import numpy as np

from bonsai.core.repomap.render import FittedMap, MapEntry
from bonsai.services.repomap.cache import TagCache
from bonsai.services.repomap.graph import GraphCore, RepoGraph, build_graph, same_structure
from bonsai.services.repomap.graph_patch import patch_core_names
from bonsai.services.repomap.graph_store import (
    Snapshot,
    SnapshotError,
    decode,
    encode,
    snapshot_key,
)
from bonsai.services.repomap.mentions import (
    NO_PARTS,
    NO_PATHS,
    MentionKeys,
    Mentions,
    PathIndex,
    WordParts,
    build_path_index,
    mention_keys,
    parse_mentions,
)
from bonsai.services.repomap.rank_carry import carried_ranks
from bonsai.services.repomap.ranking import Ranked
from bonsai.services.repomap.records import FileTags, MapFile, MapTagOut, RepoMap
from bonsai.services.repomap.stability import RenderState, decide, fingerprint
from bonsai.services.repomap.tag_store import TagStore
from bonsai.services.repomap.view_patch import patched_counts, patched_ref_edges
from bonsai.settings import RepoMapSettings

log = logging.getLogger(__name__)

ENTRY_SLACK = 64
GraphOrigin = Literal["none", "built", "loaded", "patched"]


class Fit(Protocol):
    def __call__(
        self,
        entries: Sequence[MapEntry],
        budget: int,
        count_tokens: Callable[[str], int],
        order: Callable[[str], Any] | None = None,
    ) -> FittedMap: ...


def entry_rows(budget: int) -> int:
    """How many of the ranking's rows a map of ``budget`` tokens may read."""
    return 4 * budget + ENTRY_SLACK


def leaders(ranked: Ranked, chat: Collection[str], count: int) -> list[str]:
    """The ``count`` best-ranked files outside the conversation (ties by path)."""
    files = ranked.graph.files
    order = np.lexsort((np.arange(len(files)), -ranked.file_rank))
    out: list[str] = []
    for fid in order.tolist():
        if files[fid] not in chat:
            out.append(files[fid])
            if len(out) >= count:
                break
    return out


def map_files(ranked: Ranked, included: int) -> list[MapFile]:
    """The shown files (best rank first) with the definitions shown for each.
    Made without validation (``model_construct``): every field comes typed from
    the tags, and a map of 1,024 tokens shows ~130 of them per edit."""
    table, graph = ranked.table, ranked.graph
    shown: dict[int, list[MapTagOut]] = {}
    tag = MapTagOut.model_construct
    for row in ranked.order(included).tolist():
        fid = int(table.fid[row])
        tags = shown.setdefault(fid, [])
        d = graph.definition(row)
        if d is not None:
            tags.append(tag(name=d.name, kind=d.kind, line=d.line, signature=d.signature))
    ordered = sorted(shown, key=lambda f: (-float(ranked.file_rank[f]), graph.files[f]))
    return [
        MapFile.model_construct(
            path=graph.files[f],
            rank=round(float(ranked.file_rank[f]), 8),
            tags=sorted(shown[f], key=lambda t: (t.line, t.name)),
        )
        for f in ordered
    ]


def _patched_view(
    old: RepoGraph,
    core: GraphCore,
    fresh: list[str],
    tags: Mapping[str, FileTags],
    edited: Collection[str],
    removed: Collection[str],
) -> RepoGraph:
    """The ranking view of a patched core: the old view itself when nothing but
    lines changed (its ranking stays valid), else derived afresh, starting its
    next PageRank from the old ranks. Either way the word postings and the
    looked-up name ids are carried over, patched."""
    postings = old.postings.patched(core, {p: tags[p].words for p in edited}, removed)
    if same_structure(old.core, core):
        view = old.relined(core)
        view.postings = postings
        return view
    same_files = core.files is old.files
    patch = patched_counts(old, core, fresh, edited) if same_files else None
    if patch is None:
        graph = RepoGraph(core, tags, old.file_index if same_files else None)
    else:
        edges = partial(patched_ref_edges, patch)
        graph = RepoGraph(core, tags, old.file_index, patch.counts, edges)
    graph.postings = postings
    graph.carry_name_ids(old, fresh)
    if old.last_ranks is not None:  # ``pagerank_of`` decides whether to use it
        graph.warm_start = carried_ranks(old, old.last_ranks, graph, fresh)
    return graph


def _plausible_ranks(ranks: np.ndarray, n_nodes: int) -> bool:
    """A stored PageRank vector fits this graph: one finite, non-negative value per
    node, summing to 1."""
    if len(ranks) != n_nodes or not np.all(np.isfinite(ranks)) or np.any(ranks < 0):
        return False
    return n_nodes == 0 or abs(float(ranks.sum()) - 1.0) < 1e-6


class _MentionMemo(NamedTuple):
    """The mentions of the last text, valid while no edit touches its keys."""

    text: str
    files: list[str]  # the file list they were read against (paths matter)
    keys: MentionKeys
    mentions: Mentions


def _definedness_changed(
    old: RepoGraph, new: RepoGraph, edited: Collection[str], removed: Collection[str]
) -> set[str]:
    """Names that became defined or ceased to be, by a patch of ``edited`` and
    ``removed`` files: only names those files define before or after can."""
    candidates: set[str] = set()
    core = old.core
    for path in (*edited, *removed):
        fid = old.file_index.get(path)
        if fid is not None:
            ids = core.def_names[int(core.def_offsets[fid]) : int(core.def_offsets[fid + 1])]
            candidates.update(core.names[i] for i in ids.tolist() if i >= 0)
        if path in edited:
            candidates.update(d.name for d in new.tags[path].definitions)
    return {n for n in candidates if (old.node(n) is None) != (new.node(n) is None)}


class MapState:
    """Everything a service holds between calls, guarded by ``lock``."""

    def __init__(self, cache: TagCache, workspace_key: str) -> None:
        self.lock = threading.RLock()
        self.built = False
        self.tags = TagStore(lambda paths: cache.load_data(workspace_key, paths))
        self.graph: RepoGraph | None = None
        self.previous: RenderState | None = None
        self._previous_entries: frozenset[MapEntry] = frozenset()  # what `previous` shows
        self.pending: set[str] = set()  # edited or new files not yet patched in
        self.removed: set[str] = set()  # files that left the map, not yet patched out
        self._cache = cache
        self._key = workspace_key
        self._saved: tuple[int, str | None] | None = None  # (id(graph), rank key) on disk
        self._path_index: tuple[list[str], PathIndex] | None = None
        self._word_parts: tuple[list[str], WordParts] | None = None
        self._mentions: _MentionMemo | None = None
        self.origin: GraphOrigin = "none"  # how the current graph was obtained
        self.unsettled = False  # a graph built or loaded afresh, heap not settled yet
        self._fingerprints: dict[str, tuple[object, str]] = {}  # path -> (definitions, fp)
        # the core a cold build made while parsing (``core_stream.py``), for these tags
        self.fresh_core: Callable[[Mapping[str, FileTags]], GraphCore | None] | None = None

    def note_edit(self, path: str, tags: FileTags | None) -> None:
        """Record a re-parsed file (``tags`` None: it left the map) for the graph."""
        if self.graph is None:
            return
        if tags is None:
            self.note_gone([path])
        else:
            self.pending.add(path)
            self.removed.discard(path)

    def note_gone(self, paths: list[str]) -> None:
        if self.graph is None:
            return
        for path in paths:
            self.pending.discard(path)
            if path in self.graph.file_index:
                self.removed.add(path)

    def current_graph(self) -> RepoGraph:
        """The graph for the current tags: patched after changes, else loaded from
        the snapshot when it matches, else built (and saved)."""
        if self.graph is not None and (self.pending or self.removed):
            edited = {p: self.tags[p] for p in sorted(self.pending)}
            index = self.graph.file_index
            before = self.graph.core.names
            patched, fresh = patch_core_names(self.graph.core, edited, self.removed, index)
            self._grow_word_parts(before, patched.names, fresh)
            old = self.graph
            self.graph = _patched_view(old, patched, fresh, self.tags, edited, self.removed)
            self._keep_mentions(old, self.graph, edited, self.removed)
            self.pending, self.removed = set(), set()
            self.origin = "patched"
        if self.graph is None:
            self.graph = self._load() or self._build()
            self.unsettled = True
            self.fresh_core = None
        return self.graph

    def _fingerprint(self, graph: RepoGraph, path: str) -> str:
        """``fingerprint`` of a file's definitions, remembered while they stay the
        same object (tags are replaced, never mutated, on an edit)."""
        definitions = graph.tags[path].definitions
        known = self._fingerprints.get(path)
        if known is not None and known[0] is definitions:
            return known[1]
        value = fingerprint(definitions)
        self._fingerprints[path] = (definitions, value)
        return value

    def path_index(self, graph: RepoGraph) -> PathIndex:
        if self._path_index is None or self._path_index[0] is not graph.files:
            self._path_index = (graph.files, build_path_index(graph.files))
        return self._path_index[1]

    def word_parts(self, graph: RepoGraph) -> WordParts:
        """Every known name, searchable by part, made on the first mention and
        grown by the names each patch adds (``_grow_word_parts``); a graph built
        or loaded afresh gets a fresh one."""
        names = graph.core.names
        if self._word_parts is None or self._word_parts[0] is not names:
            self._word_parts = (names, WordParts(names))
        return self._word_parts[1]

    def mentions(self, graph: RepoGraph, text: str) -> Mentions:
        """``parse_mentions`` of ``text`` for ``graph``, kept across edits that
        change no name the text's words could mention (``_keep_mentions``)."""
        if not text.strip():
            return parse_mentions(text, NO_PATHS, graph.defined, NO_PARTS)
        memo = self._mentions
        if memo is not None and memo.text == text and memo.files is graph.files:
            return memo.mentions
        index, parts = self.path_index(graph), self.word_parts(graph)
        found = parse_mentions(text, index, graph.defined, parts)
        self._mentions = _MentionMemo(text, graph.files, mention_keys(text), found)
        return found

    def _keep_mentions(
        self, old: RepoGraph, new: RepoGraph, edited: Collection[str], removed: Collection[str]
    ) -> None:
        """After a patch: the kept mentions stay valid unless the file list changed
        or a name that became defined or undefined touches the text's keys."""
        memo = self._mentions
        if memo is None:
            return
        if new.files is not memo.files or any(
            memo.keys.touched_by(n) for n in _definedness_changed(old, new, edited, removed)
        ):
            self._mentions = None

    def _grow_word_parts(self, before: list[str], after: list[str], fresh: list[str]) -> None:
        """A patch turned name list ``before`` into ``after`` by adding ``fresh``:
        the word parts follow at the cost of what was added (names are never
        dropped by a patch; ranking asks ``defined`` for the live ones)."""
        if self._word_parts is not None and self._word_parts[0] is before:
            if fresh:
                self._word_parts[1].add(fresh)
            self._word_parts = (after, self._word_parts[1])

    # -- the persisted graph ------------------------------------------------

    def _load(self) -> RepoGraph | None:
        key = snapshot_key(self.tags.rows)
        stored = self._cache.load_graph(self._key)
        if stored is None or stored[0] != key:
            return None
        try:
            snapshot = decode(stored[1])
            if snapshot.core.files != sorted(self.tags):
                raise SnapshotError("files differ from the tag cache")
        except SnapshotError as exc:
            log.warning("repomap: stored graph rejected (%s); rebuilding", exc)
            return None
        graph = RepoGraph(snapshot.core, self.tags)
        last = snapshot.last_rank
        if last is not None and _plausible_ranks(last[1], graph.n_nodes):
            graph.last_rank = last
        self._saved = (id(graph), None if graph.last_rank is None else graph.last_rank[0])
        self.origin = "loaded"
        return graph

    def _build(self) -> RepoGraph:
        self.tags.decode_all()
        core = None if self.fresh_core is None else self.fresh_core(self.tags)
        graph = build_graph(self.tags) if core is None else RepoGraph(core, self.tags)
        self._save(graph)
        self.origin = "built"
        return graph

    def _save(self, graph: RepoGraph) -> None:
        rank_key = None if graph.last_rank is None else graph.last_rank[0]
        blob = encode(Snapshot(graph.core, graph.last_rank))
        self._cache.put_graph(self._key, snapshot_key(self.tags.rows), blob)
        self._saved = (id(graph), rank_key)

    def save_if_changed(self) -> None:
        """Persist the current graph (and last ranking) unless already on disk."""
        if not self.built:
            return
        graph = self.current_graph()
        rank_key = None if graph.last_rank is None else graph.last_rank[0]
        if self._saved != (id(graph), rank_key):
            self._save(graph)

    def render(
        self,
        ranked: Ranked,
        budget: int,
        chat: Collection[str],
        settings: RepoMapSettings,
        count_tokens: Callable[[str], int],
        fit: Fit,
        started: float,
    ) -> RepoMap:
        prev = self.previous
        top_k = settings.stability_top_k
        graph = ranked.graph
        rank_of = dict(zip(graph.files, ranked.file_rank.tolist(), strict=True))
        now_fp = {
            p: self._fingerprint(graph, p) if p in graph.tags else None
            for p in (prev.fingerprints if prev else ())
        }
        lead = leaders(ranked, chat, 2 * top_k)
        decision = decide(
            prev, budget, chat, now_fp, rank_of, lead, top_k, settings.stability_drift, ranked.named
        )
        elapsed = (time.perf_counter() - started) * 1000
        if prev is not None and not decision.render:
            return RepoMap(
                text=prev.text,
                files=prev.files,
                tokens=prev.tokens,
                built_ms=elapsed,
                cached=True,
                changed=False,
                reason=decision.reason,
            )
        entries = ranked.entries(entry_rows(budget))
        fitted = fit(entries, budget, count_tokens, lambda p: (-rank_of[p], p))
        files = map_files(ranked, fitted.entries)
        chosen = frozenset(entries[: fitted.entries])
        if prev is not None and chosen == self._previous_entries:
            # the same definitions, merely ranked in another order: keep the bytes the
            # provider has cached (the prefix invariant outranks the file order)
            fitted = fitted._replace(text=prev.text, tokens=prev.tokens)
            files = prev.files
        self._previous_entries = chosen
        shown = [f.path for f in files]
        self.previous = RenderState(
            text=fitted.text,
            tokens=fitted.tokens,
            budget=budget,
            files=files,
            ranks={p: rank_of[p] for p in shown},
            fingerprints={p: self._fingerprint(graph, p) for p in shown},
            leaders=lead,
        )
        changed = prev is None or fitted.text != prev.text
        reason = decision.reason if changed else decision.reason + "; text identical"
        return RepoMap(
            text=fitted.text,
            files=files,
            tokens=fitted.tokens,
            built_ms=(time.perf_counter() - started) * 1000,
            cached=False,
            changed=changed,
            reason=reason,
        )
