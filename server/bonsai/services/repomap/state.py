"""Mutable state of one ``RepoMapService`` and the render step that consults the
stability rule before producing new text."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection
from typing import Protocol

import numpy as np

from bonsai.core.repomap_render import FittedMap, MapEntry
from bonsai.services.repomap.cache import CachedFile
from bonsai.services.repomap.graph import RepoGraph, build_graph
from bonsai.services.repomap.graph_patch import patch_graph
from bonsai.services.repomap.mentions import PathIndex, build_path_index
from bonsai.services.repomap.models import FileTags, MapFile, MapTagOut, RepoMap
from bonsai.services.repomap.ranking import DefTable, Ranked, build_table, patch_table
from bonsai.services.repomap.stability import RenderState, decide, fingerprint
from bonsai.settings import RepoMapSettings

ENTRY_SLACK = 64


class Fit(Protocol):
    def __call__(
        self, entries: list[MapEntry], budget: int, count_tokens: Callable[[str], int]
    ) -> FittedMap: ...


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
    """The shown files (best rank first) with the definitions shown for each."""
    table, graph = ranked.table, ranked.graph
    shown: dict[int, list[MapTagOut]] = {}
    for row in ranked.order[:included].tolist():
        fid = int(table.fid[row])
        tags = shown.setdefault(fid, [])
        d = table.defs[row]
        if d is not None:
            tags.append(MapTagOut(name=d.name, kind=d.kind, line=d.line, signature=d.signature))
    ordered = sorted(shown, key=lambda f: (-float(ranked.file_rank[f]), graph.files[f]))
    return [
        MapFile(
            path=graph.files[f],
            rank=round(float(ranked.file_rank[f]), 8),
            tags=sorted(shown[f], key=lambda t: (t.line, t.name)),
        )
        for f in ordered
    ]


class MapState:
    """Everything a service holds between calls, guarded by ``lock``."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.built = False
        self.rows: dict[str, CachedFile] = {}
        self.tags: dict[str, FileTags] = {}
        self.graph: RepoGraph | None = None
        self.table: DefTable | None = None
        self.path_index: PathIndex | None = None
        self.previous: RenderState | None = None
        self.pending: dict[str, FileTags | None] = {}  # tags before edits not yet in graph

    def invalidate(self) -> None:
        """Forget the graph: the next request rebuilds it."""
        self.graph = None
        self.table = None
        self.path_index = None
        self.pending = {}

    def note_edit(self, path: str, tags: FileTags | None) -> None:
        """Record an edit for the graph to patch (``tags`` = the new tags)."""
        if self.graph is None:
            return
        if tags is None:
            self.invalidate()  # a file left the map: rebuild
            return
        self.pending.setdefault(path, self.tags.get(path))

    def current_graph(self) -> tuple[RepoGraph, DefTable, PathIndex]:
        """The graph for the current tags: patched after edits, else rebuilt."""
        if self.graph is not None and self.table is not None and self.pending:
            patched = patch_graph(self.graph, self.pending, self.tags)
            if patched is None:
                self.invalidate()
            else:
                self.table = patch_table(self.table, patched, self.pending)
                self.graph = patched
                self.pending = {}
        if self.graph is None or self.table is None or self.path_index is None:
            self.graph = build_graph(self.tags)
            self.table = build_table(self.graph)
            self.path_index = build_path_index(self.tags)
            self.pending = {}
        return self.graph, self.table, self.path_index

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
        rank_of = {p: float(ranked.file_rank[i]) for i, p in enumerate(graph.files)}
        now_fp = {
            p: fingerprint(graph.tags[p].definitions) if p in graph.tags else None
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
        entries = ranked.entries(4 * budget + ENTRY_SLACK)
        fitted = fit(entries, budget, count_tokens)
        files = map_files(ranked, fitted.entries)
        shown = [f.path for f in files]
        self.previous = RenderState(
            text=fitted.text,
            tokens=fitted.tokens,
            budget=budget,
            files=files,
            ranks={p: rank_of[p] for p in shown},
            fingerprints={p: fingerprint(graph.tags[p].definitions) for p in shown},
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
