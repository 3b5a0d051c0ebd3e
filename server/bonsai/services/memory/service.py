"""``MemoryService``: the facade the daemon, the agent and the CLI use.

The markdown stores are the source of truth; the SQLite shadow in
``$BONSAI_HOME/index/memory.db`` is derived and synced lazily (fingerprint
skipped when nothing changed). One index namespace per workspace, because the
merged view (user tier + that workspace's project tier) differs per workspace.
"""

from __future__ import annotations

import builtins
import hashlib
import logging
import os
from collections.abc import Callable, Mapping
from datetime import date
from pathlib import Path
from typing import Any

import apsw

from bonsai.core.retrieval.dates import asks_latest, asks_when, date_prior, query_window
from bonsai.core.retrieval.documents import Hit
from bonsai.core.retrieval.fusion import FusionParams
from bonsai.core.retrieval.hop import inherit_bonus
from bonsai.core.retrieval.priors import PriorParams, memory_prior
from bonsai.services.memory.documents import EntryDocs
from bonsai.services.memory.embedding import EmbeddingLoad, Fetch, load_embedder
from bonsai.services.memory.entry import (
    DESCRIPTION_MAX,
    EntryType,
    MemoryEntry,
    MemoryIssue,
    Tier,
)
from bonsai.services.memory.gitignore import PROJECT_MEMORY_DIR, gitignore_advisory
from bonsai.services.memory.inject import (
    CountTokens,
    Injection,
    InjectionState,
    build_injection,
    index_line,
)
from bonsai.services.memory.naming import derive_name
from bonsai.services.memory.relevance import relevant_for_injection
from bonsai.services.memory.results import MemoryStatus, SearchHitView, SearchResult
from bonsai.services.memory.store import MemoryStore, MemoryStoreError, MergedView, merge
from bonsai.services.memory.watch import MemoryWatcher
from bonsai.services.memory.write_tool import (
    MemoryWriteArgs,
    MemoryWriteError,
    WritePlan,
    apply_plan,
    plan_write,
)
from bonsai.services.retrieval.db import open_index
from bonsai.services.retrieval.index import HybridIndex, SyncReport
from bonsai.settings import MemorySettings

log = logging.getLogger("bonsai.memory")

# the vector lane counts by how far its best cosine stands above its 10th
# (fusion.lane_scale): chosen on the bench's tune half at 1k-10k entries, where
# a constant weight cost recall as the store grew (docs/memory.md, fifth round)
MEMORY_LANE: dict[str, Any] = {
    "embedding_gap_rank": 10,
    "embedding_gap_floor": 1.0,
    "embedding_gap_full": 4.0,
}

# what a cached merged view was built from (see MemoryService.view)
Stamp = tuple[Any, ...]


class MemoryService:
    """Two-tier persistent memory with hybrid recall."""

    def __init__(
        self,
        home: Path,
        workspace: Path | None,
        settings: MemorySettings,
        *,
        env: Mapping[str, str] | None = None,
        today: Callable[[], date] = date.today,
        fetch: Fetch | None = None,
    ) -> None:
        self.home = home
        self.workspace = workspace
        self.settings = settings
        self.user_store = MemoryStore(home / "memory", "user", base=home)
        self.project_store = (
            MemoryStore(workspace / PROJECT_MEMORY_DIR, "project", base=workspace)
            if workspace is not None
            else None
        )
        self.index_path = home / "index" / "memory.db"
        self.fusion = FusionParams(cosine_floor=settings.cosine_floor, **MEMORY_LANE)
        self.priors = PriorParams()
        self._env = env
        self._today = today
        self._fetch = fetch
        self._embedding: EmbeddingLoad | None = None
        self._conn: apsw.Connection | None = None
        self._index: HybridIndex | None = None
        self._view: tuple[Stamp, MergedView] | None = None
        self._watching = False
        self._synced: tuple[MergedView, str, bool] | None = None  # view, fingerprint, any
        self._docs = EntryDocs()  # one document per entry version
        self._changes = 0  # watcher events seen; part of the view's stamp while watching

    # -- reading the stores -------------------------------------------------
    def view(self) -> MergedView:
        """Both stores merged, re-read only when something changed.

        While :meth:`watch` runs, a query costs one ``stat`` per store folder and
        never lists it: a created, deleted or renamed file (any atomic write, too)
        changes the folder's mtime, and an in-place edit arrives as a watcher
        event. Without a watcher (one CLI command) every file is stat-ed instead.
        Either way only files whose size, mtime or inode changed are parsed again."""
        if self._watching:
            stamp: Stamp = (self._changes, self._folder_stamps())
        else:
            stamp = self._file_stamps()
        if self._view is None or self._view[0] != stamp:
            project = self.project_store.scan() if self.project_store else None
            self._view = (stamp, merge(self.user_store.scan(), project))
        return self._view[1]

    def _stores(self) -> builtins.list[MemoryStore]:
        return [self.user_store, *([self.project_store] if self.project_store else [])]

    def _folder_stamps(self) -> tuple[tuple[int, int] | None, ...]:
        stamps: builtins.list[tuple[int, int] | None] = []
        for store in self._stores():
            try:
                info = os.stat(store.root)
            except OSError:
                stamps.append(None)
                continue
            stamps.append((info.st_mtime_ns, info.st_ino))
        return tuple(stamps)

    def _file_stamps(self) -> tuple[tuple[str, int, int, int], ...]:
        stamp: builtins.list[tuple[str, int, int, int]] = []
        for store in self._stores():
            if not store.root.is_dir():
                continue
            stamp.append((str(store.root.resolve()), 0, 0, 0))
            try:
                with os.scandir(store.root) as listing:
                    files = sorted(
                        (item.name, item) for item in listing if item.name.endswith(".md")
                    )
            except OSError:
                continue
            for name, item in files:
                try:
                    info = item.stat()
                except OSError:
                    continue
                stamp.append((name, info.st_size, info.st_mtime_ns, info.st_ino))
        return tuple(stamp)

    def note_changed(self) -> None:
        """A store file changed behind our back (the watcher calls this)."""
        self._changes += 1

    def list(self) -> builtins.list[MemoryEntry]:
        """All valid entries (project wins a name clash), sorted by name."""
        return [entry for _, entry in self.view().entries.values()]

    def get(self, name: str) -> MemoryEntry:
        pair = self.view().entries.get(name)
        if pair is None:
            raise MemoryStoreError(f"no memory entry named {name!r}")
        return pair[1]

    def issues(self) -> builtins.list[MemoryIssue]:
        return self.view().issues

    def gitignore_advisory(self) -> str | None:
        return gitignore_advisory(self.workspace) if self.workspace else None

    # -- writing ------------------------------------------------------------
    def store(self, tier: Tier) -> MemoryStore:
        if tier == "user":
            return self.user_store
        if self.project_store is None:
            raise MemoryStoreError("project memory needs a workspace; none is open")
        return self.project_store

    def label(self, tier: Tier, name: str) -> str:
        if tier == "project":
            return f"{PROJECT_MEMORY_DIR.as_posix()}/{name}.md"
        return str(self.user_store.root / f"{name}.md")

    def plan_write(self, args: MemoryWriteArgs) -> WritePlan:
        """Validate a ``memory_write`` call and prepare its diff (nothing written)."""
        store = self.store(args.tier)
        everything = self._all_entries()
        return plan_write(
            args, store, store.scan(), everything, self._today(), self.label(args.tier, args.name)
        )

    def apply_write(self, plan: WritePlan) -> None:
        apply_plan(plan, self.store(plan.tier))

    def write(self, args: MemoryWriteArgs) -> WritePlan:
        """The ``memory_write`` tool: plan, then write. Returns the diff and note."""
        plan = self.plan_write(args)
        self.apply_write(plan)
        return plan

    def add(
        self,
        fact: str,
        tier: Tier = "user",
        name: str | None = None,
        type: EntryType | None = None,
        description: str | None = None,
    ) -> WritePlan:
        """``/remember``: like ``write`` but refuses to replace an existing name
        and derives a name when none is given."""
        taken = {entry.name for entry in self._all_entries()}
        if name is not None and name in self.store(tier).scan().entries:
            raise MemoryStoreError(f"a {tier} entry named {name!r} exists; edit it instead")
        chosen = name or derive_name(fact, taken)
        args = MemoryWriteArgs(
            name=chosen, fact=fact, description=description, type=type, tier=tier
        )
        return self.write(args)

    def edit(
        self,
        name: str,
        *,
        fact: str | None = None,
        description: str | None = None,
        type: EntryType | None = None,
    ) -> MemoryEntry:
        """Change parts of an entry in place (minimal edit, ``updated`` bumped)."""
        entry = self.get(name)
        store = self.store(entry.tier)
        parsed, _ = store.scan().entries[name]
        changes: dict[str, object] = {}
        if description is not None:
            text = " ".join(description.split())
            if len(text) > DESCRIPTION_MAX:
                raise MemoryWriteError(f"description is longer than {DESCRIPTION_MAX} characters")
            changes["description"] = text
        if type is not None:
            changes["type"] = type
        if fact is not None:
            args = MemoryWriteArgs(
                name=name,
                fact=fact,
                description=description or entry.description,
                type=type or entry.type,
                tier=entry.tier,
            )
            self.write(args)
            return self.get(name)
        store.edit(parsed, entry.path, today=self._today(), set_keys=changes)
        return self.get(name)

    def forget(self, name: str) -> Path:
        """Delete the entry that ``name`` resolves to (project tier first)."""
        return self.store(self.get(name).tier).delete(name)

    def set_enabled(self, name: str, enabled: bool) -> MemoryEntry:
        """Toggle recall of an entry; persisted as ``enabled: false`` in its file."""
        entry = self.get(name)
        store = self.store(entry.tier)
        parsed, _ = store.scan().entries[name]
        if enabled:
            store.edit(
                parsed, entry.path, today=self._today(), remove_keys=("enabled",), touch=False
            )
        else:
            store.edit(
                parsed, entry.path, today=self._today(), set_keys={"enabled": False}, touch=False
            )
        return self.get(name)

    def _all_entries(self) -> builtins.list[MemoryEntry]:
        view = self.view()
        return [pair[1] for pair in view.entries.values()] + view.shadowed

    # -- retrieval ----------------------------------------------------------
    def embeddings(self) -> EmbeddingLoad:
        """The model, loaded once; retried when a model folder appeared since
        (e.g. after ``bonsai memory model build`` while the daemon runs)."""
        appeared = (
            self._embedding is not None
            and self._embedding.embedder is None
            and self._embedding.status.startswith("off: no embedding model")
            and self._embedding.model_dir.is_dir()
        )
        if self._embedding is None or appeared:
            self._embedding = load_embedder(
                self.home, self.settings, env=self._env, fetch=self._fetch
            )
            if self._embedding.embedder is None:
                log.info("memory embeddings %s", self._embedding.status)
        return self._embedding

    def sync(self) -> SyncReport:
        """Bring the index in line with the stores (skipped when unchanged).

        The documents and their fingerprint are built once per merged view: a
        query over an unchanged store costs one fingerprint look-up."""
        view = self.view()
        if self._synced is not None and self._synced[0] is view:
            index = self._open_index(needs_embeddings=self._synced[2])
            if index.fingerprint() == f"{self._synced[1]}|{index.model_id()}":
                return SyncReport(skipped=True)
        entries = [e for e in self.list() if e.enabled]
        index = self._open_index(needs_embeddings=bool(entries))
        fingerprint = hashlib.sha256(
            "\n".join(f"{e.tier}:{e.name}:{e.digest}" for e in entries).encode()
        ).hexdigest()
        report = index.sync(self._docs.iterate(entries), fingerprint)
        self._synced = (view, fingerprint, bool(entries))
        return report

    def _open_index(self, *, needs_embeddings: bool) -> HybridIndex:
        if self._index is None:
            self._conn = open_index(self.index_path)
            self._index = HybridIndex(self._conn, self._namespace())
        if needs_embeddings and self._index.embedder is None:
            self._index.embedder = self.embeddings().embedder
        return self._index

    def _namespace(self) -> str:
        where = str(self.workspace.resolve()) if self.workspace else "<no workspace>"
        return "memory:" + hashlib.sha256(where.encode()).hexdigest()[:16]

    def _search_hits(self, query: str, limit: int) -> builtins.list[Hit]:
        self.sync()
        assert self._index is not None
        today = self._today()
        window = query_window(query, today)
        latest = asks_latest(query)
        when = asks_when(query)
        params = self.fusion
        hits = self._index.search(
            query,
            max(limit, params.candidate_depth) if window is not None else limit,
            params=params,
            prior=lambda meta: memory_prior(
                meta, today, self.priors, window, latest=latest, when=when
            ),
        )
        if window is None:
            return hits
        # a second-hop hit keeps its place under a source dated in the window
        match = self.priors.date_match
        hits = inherit_bonus(
            hits, lambda h: date_prior(h.meta, window, match), params.feedback_weight
        )
        return hits[:limit]

    def embeddings_status(self) -> str:
        """``"on"`` or ``"off: <reason>"`` for the last sync (the model is only
        loaded once a store has entries)."""
        if self._index is not None and self._index.embedder is not None:
            return "on"
        if self._embedding is not None:
            return self._embedding.status
        return "off: no entries"

    def search(self, query: str, limit: int = 5) -> SearchResult:
        hits = self._search_hits(query, limit)
        known = self.view().entries
        results = [
            SearchHitView(
                name=h.id, tier=known[h.id][1].tier, score=round(h.score, 4), lanes=h.lanes
            )
            for h in hits
            if h.id in known
        ]
        return SearchResult(results=results, embeddings=self.embeddings_status())

    def recall_for_turn(
        self, user_text: str, injected_state: InjectionState, count_tokens: CountTokens
    ) -> Injection:
        """The background-data note for this user turn (or none), with new state."""
        if not self.settings.enabled:
            return Injection(
                text=None,
                state=injected_state,
                embeddings="off: memory disabled",
                reason="memory disabled in settings",
            )
        known = self.view().entries
        if not any(pair[1].enabled for pair in known.values()):
            return Injection(
                text=None,
                state=injected_state,
                embeddings="off: no entries",
                reason="no memory entries",
            )
        hits = self._search_hits(user_text, self.fusion.candidate_depth)
        entries = {h.id: known[h.id][1] for h in hits if h.id in known and known[h.id][1].enabled}
        sources = {h.via: known[h.via][1] for h in hits if h.via is not None and h.via in known}
        ranked = relevant_for_injection(user_text, hits, entries, sources)
        return build_injection(
            ranked,
            injected_state,
            count_tokens,
            max_entries=self.settings.max_entries_per_turn,
            max_tokens=self.settings.max_tokens_per_turn,
            embeddings=self.embeddings_status(),
        )

    # -- status, watching, lifetime -----------------------------------------
    def status(self) -> MemoryStatus:
        view = self.view()
        entries = [pair[1] for pair in view.entries.values()]
        return MemoryStatus(
            enabled=self.settings.enabled,
            user_dir=self.user_store.root,
            project_dir=self.project_store.root if self.project_store else None,
            entries=len(entries),
            project_entries=sum(1 for e in entries if e.tier == "project"),
            user_entries=sum(1 for e in entries if e.tier == "user"),
            disabled=sorted(e.name for e in entries if not e.enabled),
            shadowed=sorted(e.name for e in view.shadowed),
            issues=view.issues,
            embeddings=self.embeddings().status if entries else "off: no entries",
            model_dir=self.embeddings().model_dir,
            index_path=self.index_path,
            index_line=index_line(entries),
            gitignore_advisory=self.gitignore_advisory(),
        )

    def watch(self, callback: Callable[[Path], None]) -> MemoryWatcher:
        """Start watching both stores; ``callback(path)`` runs on the watcher's
        thread for each changed ``.md`` file (call :meth:`sync` from there or
        hand it to your loop). Stop it with ``.stop()``."""
        roots = [store.root for store in self._stores()]

        def changed(path: Path) -> None:
            self.note_changed()
            callback(path)

        watcher = MemoryWatcher(roots, changed)
        watcher.start()
        self._watching = True
        self.note_changed()  # anything written before the watch began counts as changed
        return watcher

    def close(self) -> None:
        self._watching = False
        if self._conn is not None:
            self._conn.close()
        self._conn = None
        self._index = None
        self._synced = None
