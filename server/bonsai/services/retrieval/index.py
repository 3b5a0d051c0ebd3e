"""``HybridIndex``: a generic FTS5 + vector shadow for any set of documents.

Usage::

    conn = open_index(path)
    index = HybridIndex(conn, "memory/abc123", embedder=model_or_None)
    index.sync(docs, fingerprint)        # skipped when the fingerprint is unchanged
    hits = index.search("how do we build?", k=5)

Documents are identified by ``Doc.id`` within a namespace; ``sync`` makes the
namespace hold exactly the given documents, ``upsert``/``delete`` change it
incrementally (for append-mostly sets such as session history). Without an
embedder the index is BM25-only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import apsw
from pydantic import BaseModel, JsonValue

from bonsai.core.retrieval.background import BACKGROUND_SENTENCES
from bonsai.core.retrieval.documents import Doc, Hit, Lane
from bonsai.core.retrieval.fusion import (
    FusionParams,
    bridge_slot,
    fuse_scores,
    fused_hits,
    lane_bonus,
    ranked,
)
from bonsai.core.retrieval.parts import feedback_terms, query_parts
from bonsai.services.retrieval.db import ensure_fts
from bonsai.services.retrieval.embedder import Embedder, Vectors, normalise_rows
from bonsai.services.retrieval.lanes import VectorMatrix, bm25_lane, embedding_lane, load_matrix
from bonsai.services.retrieval.writes import (
    WriteCounts,
    bump_generation,
    delete_docs,
    embed_missing,
    existing_rows,
    upsert_docs,
)

Prior = Callable[[Mapping[str, Any]], float]


class SyncReport(BaseModel):
    """Outcome of :meth:`HybridIndex.sync`; ``skipped`` when the fingerprint matched."""

    skipped: bool
    added: int = 0
    updated: int = 0
    removed: int = 0
    embedded: int = 0


class HybridIndex:
    """Hybrid BM25 + embedding search over one namespace of an index database."""

    def __init__(
        self,
        conn: apsw.Connection,
        namespace: str,
        embedder: Embedder | None = None,
        *,
        background: Sequence[str] = BACKGROUND_SENTENCES,
    ) -> None:
        if not namespace:
            raise ValueError("namespace must be a non-empty string")
        self.conn = conn
        self.namespace = namespace
        self.embedder = embedder
        self.background = tuple(background)
        self.rows_written = 0
        with conn:
            self._fts = ensure_fts(conn, namespace)
        self._vectors: VectorMatrix | None = None
        self._background: tuple[str, Vectors] | None = None
        self._meta_cache: tuple[int, dict[str, dict[str, JsonValue]]] | None = None

    # -- writing -----------------------------------------------------------
    def sync(self, docs: Iterable[Doc], fingerprint: str) -> SyncReport:
        """Make the namespace hold exactly ``docs``; no work when ``fingerprint``
        (plus the embedding model id) equals the one recorded by the last sync."""
        full = f"{fingerprint}|{self._model_id()}"
        if self.fingerprint() == full:
            return SyncReport(skipped=True)
        wanted = _unique(docs)
        counts = WriteCounts()
        with self.conn:
            existing = existing_rows(self.conn, self.namespace)
            stale = [row for doc_id, (row, _) in existing.items() if doc_id not in wanted]
            delete_docs(self.conn, self._fts, stale, counts)
            for doc_id in [d for d in existing if d not in wanted]:
                del existing[doc_id]
            upsert_docs(
                self.conn, self.namespace, self._fts, list(wanted.values()), existing, counts
            )
            self._finish_write(counts, full)
        return SyncReport(skipped=False, **_counts(counts))

    def upsert(self, docs: Iterable[Doc]) -> SyncReport:
        """Add or replace the given documents, leaving the others alone."""
        counts = WriteCounts()
        with self.conn:
            existing = existing_rows(self.conn, self.namespace)
            docs_list = list(_unique(docs).values())
            upsert_docs(self.conn, self.namespace, self._fts, docs_list, existing, counts)
            self._finish_write(counts, None)
        return SyncReport(skipped=False, **_counts(counts))

    def delete(self, ids: Iterable[str]) -> SyncReport:
        counts = WriteCounts()
        with self.conn:
            existing = existing_rows(self.conn, self.namespace)
            rows = [existing[i][0] for i in dict.fromkeys(ids) if i in existing]
            delete_docs(self.conn, self._fts, rows, counts)
            self._finish_write(counts, None)
        return SyncReport(skipped=False, **_counts(counts))

    def _finish_write(self, counts: WriteCounts, fingerprint: str | None) -> None:
        if self.embedder is not None:
            embed_missing(self.conn, self.namespace, self._fts, self.embedder, counts)
        if counts.total or fingerprint != self.fingerprint():
            bump_generation(self.conn, self.namespace, fingerprint)
        self.rows_written += counts.total

    # -- reading -----------------------------------------------------------
    def fingerprint(self) -> str | None:
        row = self.conn.execute(
            "SELECT fingerprint FROM namespaces WHERE namespace = ?", (self.namespace,)
        ).fetchone()
        return None if row is None or row[0] is None else str(row[0])

    def count(self) -> int:
        row = self.conn.execute(
            "SELECT count(*) FROM docs WHERE namespace = ?", (self.namespace,)
        ).fetchone()
        return int(row[0]) if row else 0

    def lanes(self, query: str, depth: int) -> tuple[Lane, Lane | None]:
        """The raw BM25 lane and the embedding lane (``None`` without an embedder)."""
        lexical = bm25_lane(self.conn, self._fts, query, depth)
        if self.embedder is None or not query.strip():
            return lexical, None
        vectors = self._matrix()
        query_vector = normalise_rows(self.embedder.encode([query]))[0]
        return lexical, embedding_lane(vectors, query_vector, depth, self._background_vectors())

    def search(
        self,
        query: str,
        k: int,
        *,
        params: FusionParams | None = None,
        prior: Prior | None = None,
    ) -> list[Hit]:
        """Fused hits, best first. Documents in neither lane are never returned."""
        if k <= 0:
            return []
        params = params or FusionParams()
        lexical, semantic = self.lanes(query, max(params.candidate_depth, k))
        scores = fuse_scores(lexical, semantic, params)
        if params.part_weight > 0:
            parts = [
                bm25_lane(self.conn, self._fts, part, params.extra_depth)
                for part in query_parts(query)
            ]
            lane_bonus(scores, parts, params.part_weight, params.extra_depth)
        if params.feedback_weight > 0 and params.feedback_docs > 0 and scores:
            sources = ranked(scores)[: params.feedback_docs]
            lanes = []
            for text in self._texts(sources):
                terms = feedback_terms(query, [text])
                lanes.append(
                    bm25_lane(self.conn, self._fts, " ".join(terms), params.extra_depth)
                    if terms
                    else Lane()
                )
            lane_bonus(
                scores, lanes, params.feedback_weight, params.extra_depth, skip=frozenset(sources)
            )
            if lanes:
                bridge_slot(scores, lanes[0], params.bridge_rank)
        metas = self._metas()
        if prior is not None:
            for doc_id, row in scores.items():
                row[0] = (row[0] or 0.0) + prior(metas.get(doc_id, {}))
        top = ranked(scores)[:k]
        return [
            Hit(id=f.id, score=f.score, lanes=f.lanes, meta=metas.get(f.id, {}))
            for f in fused_hits(scores, top)
        ]

    def _metas(self) -> dict[str, dict[str, JsonValue]]:
        """Every document's metadata, read once per generation of the namespace."""
        generation = self._generation()
        if self._meta_cache is None or self._meta_cache[0] != generation:
            rows = self.conn.execute(
                "SELECT doc_id, meta FROM docs WHERE namespace = ?", (self.namespace,)
            )
            self._meta_cache = (generation, {str(d): json.loads(m) for d, m in rows})
        return self._meta_cache[1]

    def _texts(self, ids: Sequence[str]) -> list[str]:
        """The indexed text of ``ids``, in that order (one query)."""
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = self.conn.execute(
            f"SELECT d.doc_id, f.body FROM {self._fts} f JOIN docs d ON d.rowid = f.rowid "
            f"WHERE d.namespace = ? AND d.doc_id IN ({marks})",
            (self.namespace, *ids),
        ).fetchall()
        found = {str(doc_id): str(body) for doc_id, body in rows}
        return [found[i] for i in ids if i in found]

    def _matrix(self) -> VectorMatrix:
        assert self.embedder is not None
        generation = self._generation()
        model = self.embedder.model_id
        cached = self._vectors
        if cached is None or cached.generation != generation or cached.model != model:
            cached = load_matrix(self.conn, self.namespace, model, generation)
            self._vectors = cached
        return cached

    def _background_vectors(self) -> Vectors | None:
        """The reference sentences embedded once per model (see
        :mod:`bonsai.core.retrieval.background`)."""
        if self.embedder is None or not self.background:
            return None
        model = self.embedder.model_id
        if self._background is None or self._background[0] != model:
            self._background = (model, normalise_rows(self.embedder.encode(self.background)))
        return self._background[1]

    def _generation(self) -> int:
        row = self.conn.execute(
            "SELECT generation FROM namespaces WHERE namespace = ?", (self.namespace,)
        ).fetchone()
        return int(row[0]) if row else 0

    def model_id(self) -> str:
        """The id the fingerprint records (the embedding model, or BM25-only)."""
        return self._model_id()

    def _model_id(self) -> str:
        return self.embedder.model_id if self.embedder is not None else "bm25-only"


def _unique(docs: Iterable[Doc]) -> dict[str, Doc]:
    out: dict[str, Doc] = {}
    for doc in docs:
        if doc.id in out:
            raise ValueError(f"duplicate document id {doc.id!r}")
        out[doc.id] = doc
    return out


def _counts(counts: WriteCounts) -> dict[str, int]:
    return {
        "added": counts.added,
        "updated": counts.updated,
        "removed": counts.removed,
        "embedded": counts.embedded,
    }
