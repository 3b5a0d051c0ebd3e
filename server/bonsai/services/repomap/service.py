"""``RepoMapService``: the repository map of one workspace, kept current.

Owns the tag cache, the in-memory tags, the reference graph (patched after
edits, loaded from its snapshot on a warm start) and the last rendered map (for
the cache-stability rule in ``stability.py``). Thread-safe: the watcher thread, the daemon's request
handlers and ``update_paths`` callers serialise on one re-entrant lock.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

from bonsai.core.repomap.render import fit_entries
from bonsai.services.repomap.cache import CachedFile, CacheRow, TagCache
from bonsai.services.repomap.core_stream import CoreStream
from bonsai.services.repomap.discovery import (
    DEFAULT_EXCLUDED_DIRS,
    Candidate,
    IgnoreRules,
    discover,
    stat_candidate,
)
from bonsai.services.repomap.edit_parse import EditTrees
from bonsai.services.repomap.first_map import FirstRequest, first_pass
from bonsai.services.repomap.grammar_warmup import warm_languages
from bonsai.services.repomap.heap import array_bytes, settle
from bonsai.services.repomap.indexer import FirstPass, Progress, index_files
from bonsai.services.repomap.indexer_core import FileResult, index_file
from bonsai.services.repomap.issue_text import without_dumps
from bonsai.services.repomap.map_state import GraphOrigin, MapState, entry_rows
from bonsai.services.repomap.memo import fresh_key
from bonsai.services.repomap.ranking import Ranked, rank
from bonsai.services.repomap.records import BuildStats, FileTags, RepoMap
from bonsai.services.repomap.shared_tags import SharedTags
from bonsai.services.repomap.watcher import RepoWatcher
from bonsai.settings import RepoMapSettings

log = logging.getLogger(__name__)

CountTokens = Callable[[str], int]
SHARED_UPDATE_MIN = 16  # an update of this many files looks for shared tags (a branch switch)


def _stat_changed(row: CachedFile | None, cand: Candidate) -> bool:
    return row is not None and (row.size, row.mtime_ns) != (cand.size, cand.mtime_ns)


class RepoMapService:
    """Facade over discovery, tags, cache, ranking, rendering and watching."""

    def __init__(
        self,
        workspace: Path,
        cache_db: Path,
        settings: RepoMapSettings,
        count_tokens: CountTokens,
    ) -> None:
        self.workspace = workspace.resolve()
        if not self.workspace.is_dir():
            raise NotADirectoryError(f"repository map: {workspace} is not a directory")
        self.settings = settings
        self.count_tokens = count_tokens
        self.rules = IgnoreRules(
            self.workspace,
            DEFAULT_EXCLUDED_DIRS | set(settings.extra_exclude_dirs),
            settings.max_file_bytes,
        )
        self._key = str(self.workspace)
        self._cache = TagCache(cache_db)
        self._shared = SharedTags(self._cache)  # other checkouts' tags of the same bytes
        self._state = MapState(self._cache, self._key)
        self._trees = EditTrees()  # the last edited files' trees: incremental parses
        self._watcher: RepoWatcher | None = None
        self._closed = False
        self._listeners: list[Callable[[BuildStats], None]] = []
        self._long_lived = False  # see keep_for_edits
        self.last_stats = BuildStats()

    # -- building -----------------------------------------------------------

    def _workers(self) -> int:
        return self.settings.workers or min(4, os.cpu_count() or 1)

    def build(
        self, progress: Progress | None = None, first: FirstRequest | None = None
    ) -> BuildStats:
        """Discover and index the whole workspace (warm: only changed files parse).
        With ``first``, a cold build of many files parses the files that matter
        most first and hands ``first.on_map`` their map before the rest is
        parsed (``first_map.py``); what the build leaves is the same."""
        started = time.perf_counter()
        with self._state.lock:
            found = discover(self.rules)
            st = self._state
            if not st.built:
                st.tags.rows = self._cache.load(self._key, with_data=False)
            cached = dict(st.tags.rows)
            changed = [c.path for c in found.files if _stat_changed(cached.get(c.path), c)]
            cached.update(st.tags.with_data(changed))  # a touched file is hashed against it
            early = None if first is None else partial(self._first_pass, found.files, cached, first)
            stream = CoreStream() if st.graph is None and not cached else None  # a cold build
            results = index_files(
                self.workspace,
                found.files,
                cached,
                progress,
                self._workers(),
                early,
                None if stream is None else stream.add,
                self._shared.lookup(),
            )
            gone = sorted(set(cached) - {c.path for c in found.files})
            stats = self._apply(results, gone, cached)
            self._shared.record_soon(results)
            st.fresh_core = None if stream is None else stream.core
            stats = stats.model_copy(
                update={
                    "files": len(found.files),
                    "skipped": stats.skipped + len(found.too_large),
                    "elapsed_ms": (time.perf_counter() - started) * 1000,
                }
            )
            self.last_stats = stats
            return stats

    def _first_pass(
        self, files: list[Candidate], cached: dict[str, CachedFile], first: FirstRequest
    ) -> FirstPass | None:
        chat = self._relative_set(first.chat_files)
        budget = first.tokens if first.tokens is not None else self._default_budget(chat)
        if budget < 0:
            raise ValueError(f"repository map: token budget must be >= 0, got {budget}")
        request = first._replace(chat_files=chat)
        return first_pass(self.workspace, files, cached, request, budget, self.count_tokens)

    def _apply(
        self, results: list[FileResult], gone: list[str], cached: dict[str, CachedFile]
    ) -> BuildStats:
        """Store results in memory and in the cache; count what happened. Trusted
        files keep their cached row (tags decoded only when read)."""
        st = self._state
        counts = {"trusted": 0, "hashed": 0, "parsed": 0, "shared": 0, "skipped": 0}
        rows: list[CacheRow] = []
        for res in results:
            counts[res.outcome] += 1
            if res.outcome == "trusted":
                if st.tags.rows.get(res.path) is not cached[res.path]:
                    st.tags.put(res.path, cached[res.path])
                continue
            if res.outcome in ("parsed", "shared") or res.row is None:
                st.note_edit(res.path, res.tags)
            if res.row is None:
                st.tags.drop(res.path)
                continue
            rows.append(res.row)
            st.tags.put(res.path, res.row.file, res.tags)
        for path in gone:
            st.tags.drop(path)
        st.note_gone(gone)
        self._cache.put_many(self._key, rows)
        self._cache.delete_many(self._key, gone)
        st.built = True
        return BuildStats(removed=len(gone), **counts)

    def update_paths(self, paths: Iterable[str | os.PathLike[str]]) -> BuildStats:
        """Re-index just these paths (created, changed, deleted or moved)."""
        started = time.perf_counter()
        rels = sorted({r for r in (self._relative(p) for p in paths) if r is not None})
        with self._state.lock:
            if not self._state.built:
                return self.build()
            if any(r == ".gitignore" or r.endswith("/.gitignore") for r in rels):
                self.rules.reset()
                return self.build()
            to_index, gone = self._plan_update(rels)
            known = dict(self._state.tags.rows)
            known.update(self._state.tags.with_data(c.path for c in to_index))
            if len(to_index) >= SHARED_UPDATE_MIN:  # a checkout changed branch, not an edit
                results = index_files(
                    self.workspace,
                    to_index,
                    known,
                    None,
                    self._workers(),
                    shared=self._shared.lookup(),
                )
                self._shared.record_soon(results)
            else:
                results = [
                    index_file(self.workspace, c, known.get(c.path), extract=self._trees.extract)
                    for c in to_index
                ]
            for path in gone:
                self._trees.forget(path)
            stats = self._apply(results, gone, known)
            stats = stats.model_copy(
                update={"files": len(results), "elapsed_ms": (time.perf_counter() - started) * 1000}
            )
            self.last_stats = stats
        return stats

    def _plan_update(self, rels: list[str]) -> tuple[list[Candidate], list[str]]:
        to_index: dict[str, Candidate] = {}
        gone: set[str] = set()
        known = self._state.tags.rows
        for rel in rels:
            if (self.workspace / rel).is_dir():
                for cand in discover(self.rules, rel).files:
                    to_index[cand.path] = cand
                continue
            single = stat_candidate(self.rules, rel)
            if single is not None:
                to_index[rel] = single
                continue
            prefix = rel + "/"
            gone.update(p for p in known if p == rel or p.startswith(prefix))
        return [to_index[p] for p in sorted(to_index)], sorted(gone - set(to_index))

    def _relative(self, path: str | os.PathLike[str]) -> str | None:
        p = Path(path)
        absolute = p if p.is_absolute() else self.workspace / p
        try:
            rel = absolute.relative_to(self.workspace).as_posix()
        except ValueError:
            return None
        return None if rel in ("", ".") else rel

    # -- ranking and rendering ---------------------------------------------

    def rank(
        self,
        chat_files: Iterable[str] = (),
        mentions: str = "",
        recent_files: Iterable[str] = (),
        rows: int = 0,
    ) -> Ranked:
        """The full ranking for these inputs (what ``get`` renders from; ``rows``:
        how many of its rows will be read)."""
        with self._state.lock:
            if not self._state.built:
                self.build()
            graph = self._state.current_graph()
            mentions = without_dumps(mentions)  # an issue's environment dump names nothing
            found = self._state.mentions(graph, mentions)  # kept across unrelated edits
            chat = self._relative_set(chat_files)
            recent = self._relative_set(recent_files)
            return rank(graph, chat, recent, found, mentions, rows)

    def _relative_set(self, paths: Iterable[str]) -> frozenset[str]:
        return frozenset(r for r in (self._relative(p) for p in paths) if r is not None)

    def get(
        self,
        tokens: int | None = None,
        chat_files: Iterable[str] = (),
        mentions: str = "",
        recent_files: Iterable[str] = (),
    ) -> RepoMap:
        """The map for this turn; the previous text unless the stability rule says
        the inputs changed enough (``changed``/``reason`` tell the ledger)."""
        started = time.perf_counter()
        chat = self._relative_set(chat_files)
        budget = tokens if tokens is not None else self._default_budget(chat)
        if budget < 0:
            raise ValueError(f"repository map: token budget must be >= 0, got {budget}")
        with self._state.lock:
            ranked = self.rank(chat, mentions, recent_files, entry_rows(budget))
            result = self._state.render(
                ranked, budget, chat, self.settings, self.count_tokens, fit_entries, started
            )
            if self._state.unsettled and self._long_lived:  # a fresh graph's first map
                self._state.unsettled = False
                graph = self._state.current_graph()
                settle(array_bytes(graph, graph.core))
                warm_languages(graph.files)  # the first edit compiles no query
            return result

    def cached_fresh(
        self,
        tokens: int | None = None,
        chat_files: Iterable[str] = (),
        mentions: str = "",
        counter_id: str = "",
        settings_id: str | None = None,
    ) -> RepoMap | None:
        """The map a from-scratch render of these inputs gave last time, if the
        files are unchanged since: the same files, budget, chat, mentions,
        settings and token counter (``counter_id``) give the same bytes, so a warm
        one-shot caller (the CLI) neither ranks nor counts tokens. Builds first.
        ``settings_id`` names the settings in the key (default: their JSON; see
        ``memo.py`` for a caller that looks the map up without this service)."""
        started = time.perf_counter()
        with self._state.lock:
            key = self._fresh_key(tokens, chat_files, mentions, counter_id, settings_id)
            stored = self._cache.load_render(self._key, key)
        if stored is None:
            return None
        elapsed = (time.perf_counter() - started) * 1000
        return RepoMap.model_validate_json(stored).model_copy(
            update={"built_ms": elapsed, "cached": True}
        )

    def get_fresh(
        self,
        tokens: int | None = None,
        chat_files: Iterable[str] = (),
        mentions: str = "",
        counter_id: str = "",
        settings_id: str | None = None,
    ) -> RepoMap:
        """Render these inputs from scratch (no previous map) and remember the
        result for :meth:`cached_fresh`."""
        with self._state.lock:
            key = self._fresh_key(tokens, chat_files, mentions, counter_id, settings_id)
            self._state.previous = None
            result = self.get(tokens, chat_files, mentions)
            self._cache.put_render(self._key, key, result.model_dump_json())
            return result

    def _fresh_key(
        self,
        tokens: int | None,
        chat_files: Iterable[str],
        mentions: str,
        counter_id: str,
        settings_id: str | None,
    ) -> str:
        if not self._state.built:
            self.build()
        settings = self.settings.model_dump_json() if settings_id is None else settings_id
        return fresh_key(
            self._state.tags.rows,
            self.workspace,
            tokens,
            chat_files,
            mentions,
            settings,
            counter_id,
        )

    def forget_previous(self) -> None:
        """Drop the last rendered map: the next ``get`` renders from scratch (a new
        session, whose prompt prefix is not cached yet)."""
        with self._state.lock:
            self._state.previous = None

    def _default_budget(self, chat: frozenset[str]) -> int:
        return self.settings.tokens if chat else self.settings.tokens_no_files

    # -- watching -----------------------------------------------------------

    def keep_for_edits(self) -> None:
        """Mark this service long-lived (a daemon's): the first map of each graph
        built or loaded afresh then readies the process for the edits to come
        (``heap.py``, and the main languages' tag queries compiled,
        ``grammar_warmup.py``: ~30-40 ms on a 2,400-file Python repository,
        taken off the first edit). A one-shot caller (the CLI) does not pay it.
        Watching implies it."""
        self._long_lived = True

    def start_watching(self, on_update: Callable[[BuildStats], None] | None = None) -> None:
        """Follow file changes with watchdog (debounced); builds first if needed."""
        self.keep_for_edits()
        if on_update is not None:
            self._listeners.append(on_update)
        with self._state.lock:
            if not self._state.built:
                self.build()
            if self._watcher is not None:
                return
            self._watcher = RepoWatcher(self.workspace, self._on_changes, self.settings.debounce_s)
        self._watcher.start()

    def _on_changes(self, paths: list[str]) -> None:
        stats = self.update_paths(paths)
        for listener in list(self._listeners):
            listener(stats)

    def stop(self) -> None:
        """Stop watching, save the graph snapshot if it changed since it was last
        saved, and close the cache. The service is unusable afterwards."""
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
        self._shared.wait()  # its writes go through the cache closed below
        with self._state.lock:
            if self._closed:
                return
            try:
                self._state.save_if_changed()
            except Exception:  # a failed save only costs the next warm start time
                log.exception("repomap: could not save the graph snapshot")
            self._cache.close()
            self._closed = True

    @property
    def graph_origin(self) -> GraphOrigin:
        """How the current graph was obtained: ``"built"`` from all tags,
        ``"loaded"`` from the snapshot saved next to the tag cache, ``"patched"``
        after edits, or ``"none"`` before the first map."""
        return self._state.origin

    @property
    def tags(self) -> dict[str, FileTags]:
        """Current tags by path (a copy)."""
        with self._state.lock:
            self._state.tags.decode_all()
            return dict(self._state.tags)
