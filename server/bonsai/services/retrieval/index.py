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

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import apsw
from pydantic import BaseModel

from bonsai.core.retrieval.background import BACKGROUND_SENTENCES
from bonsai.core.retrieval.documents import Doc, Hit, Lane
from bonsai.core.retrieval.fusion import (
    FusionParams,
    fuse_scores,
    fused_hits,
    lane_bonus,
    ranked,
)
from bonsai.core.retrieval.hop import second_hop
from bonsai.core.retrieval.parts import entities, query_parts
from bonsai.core.retrieval.query import query_terms, quote_term
from bonsai.core.retrieval.relations import RelationTable, expand
from bonsai.services.retrieval.db import ensure_fts
from bonsai.services.retrieval.embedder import Embedder, Vectors, normalise_rows
from bonsai.services.retrieval.lanes import VectorMatrix, bm25_match, embedding_lane, load_matrix
from bonsai.services.retrieval.snapshot import Snapshot
from bonsai.services.retrieval.writes import (
    WriteCounts,
    bump_generation,
    delete_docs,
    doc_hash,
    embed_missing,
    existing_rows,
    upsert_docs,
)

Prior = Callable[[Mapping[str, Any]], float]

# bound of the second hop's candidate pool (entries holding a followed entity
# word, fetched unranked in row order and weighed in Python on their term sets)
LINKED_ROWS = 512
# a write pass changing at least this many documents merges the full-text
# index's segments afterwards (a bulk build leaves dozens; each query pays for
# every segment it has to read)
OPTIMIZE_AFTER = 64
# below this many documents every query term is searched (pruning saves nothing)
PRUNE_MIN_DOCS = 500


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
        self._snapshot: Snapshot | None = None
        self._hashes: dict[str, tuple[Doc, str]] = {}  # see _hash_of
        self._tokenizer = conn.fts5_tokenizer("porter", ["unicode61"])
        self._relations: RelationTable | None = None

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
            bodies = upsert_docs(
                self.conn,
                self.namespace,
                self._fts,
                list(wanted.values()),
                existing,
                counts,
                self._tokenize,
                self._hash_of,
            )
            self._finish_write(counts, full, bodies)
        self._hashes = {i: self._hashes[i] for i in wanted if i in self._hashes}
        return SyncReport(skipped=False, **_counts(counts))

    def upsert(self, docs: Iterable[Doc]) -> SyncReport:
        """Add or replace the given documents, leaving the others alone."""
        counts = WriteCounts()
        with self.conn:
            existing = existing_rows(self.conn, self.namespace)
            docs_list = list(_unique(docs).values())
            bodies = upsert_docs(
                self.conn,
                self.namespace,
                self._fts,
                docs_list,
                existing,
                counts,
                self._tokenize,
                self._hash_of,
            )
            self._finish_write(counts, None, bodies)
        return SyncReport(skipped=False, **_counts(counts))

    def _hash_of(self, doc: Doc) -> str:
        """``doc_hash(doc)``, computed once per document object (documents are
        frozen): a resync handing back the same documents hashes none again."""
        known = self._hashes.get(doc.id)
        if known is not None and known[0] is doc:
            return known[1]
        digest = doc_hash(doc)
        self._hashes[doc.id] = (doc, digest)
        return digest

    def delete(self, ids: Iterable[str]) -> SyncReport:
        counts = WriteCounts()
        with self.conn:
            existing = existing_rows(self.conn, self.namespace)
            wanted = list(dict.fromkeys(ids))
            rows = [existing[i][0] for i in wanted if i in existing]
            for doc_id in wanted:
                self._hashes.pop(doc_id, None)
            delete_docs(self.conn, self._fts, rows, counts)
            self._finish_write(counts, None)
        return SyncReport(skipped=False, **_counts(counts))

    def _finish_write(
        self, counts: WriteCounts, fingerprint: str | None, bodies: Mapping[int, str] | None = None
    ) -> None:
        if self.embedder is not None:
            embed_missing(self.conn, self.namespace, self._fts, self.embedder, counts, bodies)
        if counts.added + counts.updated + counts.removed >= OPTIMIZE_AFTER:
            self.conn.execute(f"INSERT INTO {self._fts}({self._fts}) VALUES ('optimize')")
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
        return self._lanes(query, depth, self._current())

    def _lanes(self, query: str, depth: int, snap: Snapshot) -> tuple[Lane, Lane | None]:
        lexical = self._bm25(query, depth, snap)
        if self.embedder is None or not query.strip():
            return lexical, None
        vectors = self._matrix(snap.generation)
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
        """Fused hits, best first. Documents in neither lane (nor reached by the
        second hop from one that is) are never returned."""
        if k <= 0:
            return []
        params = params or FusionParams()
        snap = self._current()
        lexical, semantic = self._lanes(query, max(params.candidate_depth, k), snap)
        scores = fuse_scores(lexical, semantic, params)
        if params.part_weight > 0:
            parts = [self._bm25(part, params.extra_depth, snap) for part in query_parts(query)]
            lane_bonus(scores, parts, params.part_weight, params.extra_depth)
        via: dict[str, str] = {}
        if params.feedback_weight > 0 and params.feedback_docs > 0 and scores:
            self._second_hop(query, scores, params, snap, via)
        if prior is not None:
            for doc_id, row in scores.items():
                row[0] = (row[0] or 0.0) + prior(snap.meta(doc_id))
        top = ranked(scores)[:k]
        return [
            Hit(id=f.id, score=f.score, lanes=f.lanes, meta=snap.meta(f.id), via=via.get(f.id))
            for f in fused_hits(scores, top)
        ]

    def _second_hop(
        self,
        query: str,
        scores: dict[str, list[float | None]],
        params: FusionParams,
        snap: Snapshot,
        via: dict[str, str],
    ) -> None:
        """Follow the entity words of the top hits (see :mod:`bonsai.core.retrieval.hop`):
        one vocabulary look-up for the weights (cached per generation) and one
        unranked, bounded full-text query for the linked entries, whatever the
        number of heads; ``via`` receives each lifted entry's source."""
        heads = ranked(scores)[: params.feedback_docs]
        terms = query_terms(query)
        question = set(self._tokenize(" ".join(terms)))
        question |= set(self._tokenize(" ".join(entities(query))))
        words: dict[str, str] = {}  # link token -> the stored word it came from
        links: dict[str, set[str]] = {}
        for head in heads:
            links[head] = set()
            # a word opening a sentence of the head ("Ana moved to Porto") is
            # followed when it is an entity word of another document ("Ana Costa")
            weak = [w for w in snap.weak_links(head) if any(d != head for d in snap.linked(w))]
            for word in [*snap.links(head), *weak]:
                for token in self._tokenize(word):
                    if token not in question:
                        links[head].add(token)
                        words.setdefault(token, word)
        frequency = self._frequencies(question | set(words), snap)
        max_df = max(params.link_df_min, int(params.link_df * len(snap)))
        followed = sorted(t for t in words if 2 <= frequency.get(t, 0) <= max_df)
        if not followed:
            return
        linked = " OR ".join(dict.fromkeys(quote_term(words[t]) for t in followed))
        rows = self.conn.execute(
            f"SELECT rowid FROM {self._fts} WHERE {self._fts} MATCH ? LIMIT ?",
            (linked, LINKED_ROWS),
        )
        total = len(snap)
        weights = {
            t: math.log(1 + (total - frequency[t] + 0.5) / (frequency[t] + 0.5))
            for t in question
            if t in frequency
        }
        kept = set(followed)
        relations = {}
        if params.hop_relations:
            relations = self._relation_docs(query, linked, weights, snap)
        second_hop(
            scores,
            heads,
            {head: tokens & kept for head, tokens in links.items()},
            (snap.ids[r] for (r,) in rows if r in snap.ids),
            weights,
            terms_of=snap.terms,
            average_terms=snap.average_terms(),
            factor=params.feedback_weight,
            limit=params.feedback_max,
            nomatch=params.feedback_nomatch,
            sources=via,
            relations=relations,
        )

    def _relation_docs(
        self, query: str, linked: str, weights: dict[str, float], snap: Snapshot
    ) -> dict[str, set[str]]:
        """The relation families the question names (see
        :mod:`bonsai.core.retrieval.relations`): their words join ``weights``
        as question terms, and for each family's phrases the linked entries
        stating one (one bounded full-text query per family named, mostly
        none or one) are returned under the family's pseudo-term."""
        if self._relations is None:
            self._relations = RelationTable.build(self._tokenize)
        expansion = expand(self._relations, self._tokenize(query), weights)
        weights.update(expansion.words)
        weights.update(expansion.weights)
        out: dict[str, set[str]] = {}
        for key, phrases in expansion.phrases.items():
            members = " OR ".join(quote_term(p) for p in phrases)
            rows = self.conn.execute(
                f"SELECT rowid FROM {self._fts} WHERE {self._fts} MATCH ? LIMIT ?",
                (f"({linked}) AND ({members})", LINKED_ROWS),
            )
            out[key] = {snap.ids[r] for (r,) in rows if r in snap.ids}
        return out

    def _bm25(self, text: str, depth: int, snap: Snapshot) -> Lane:
        """The BM25 lane of ``text``. In a large namespace the single-word terms
        found in more than half its documents are left out while another term
        matches: FTS5 clamps their weight (IDF) to about zero, so they change no
        ranking but have every matching row scored (the word "developer" in a
        store of developer notes)."""
        terms = query_terms(text)
        if not terms or depth <= 0:
            return Lane()
        kept = terms
        if len(snap) >= PRUNE_MIN_DOCS:
            tokens = {term: self._tokenize(term) for term in terms}
            single = {toks[0] for toks in tokens.values() if len(toks) == 1}
            frequency = self._frequencies(single, snap)
            common = {t for t, n in frequency.items() if n > len(snap) / 2}
            if common and any(t not in common for t in frequency):
                kept = [t for t in terms if not (len(tokens[t]) == 1 and tokens[t][0] in common)]
        expression = " OR ".join(quote_term(t) for t in kept)
        return bm25_match(self.conn, self._fts, expression, depth, snap.ids)

    def _frequencies(self, tokens: Iterable[str], snap: Snapshot) -> dict[str, int]:
        """How many documents of the namespace contain each token: from the
        generation's cache, the rest in one look-up in the full-text table's
        vocabulary (a token it lacks is recorded as 0)."""
        cache = snap.frequencies
        wanted = set(tokens)
        missing = sorted(t for t in wanted if t not in cache)
        if missing:
            marks = ",".join("?" * len(missing))
            rows = self.conn.execute(
                f"SELECT term, doc FROM {self._fts}_vocab WHERE term IN ({marks})", missing
            )
            cache.update(dict.fromkeys(missing, 0))
            cache.update({str(term): int(str(doc)) for term, doc in rows})
        return {t: cache[t] for t in wanted if cache[t] > 0}

    def _tokenize(self, text: str) -> list[str]:
        """``text`` as the full-text table's tokenizer (porter, unicode61) splits it."""
        return [
            str(t)
            for t in self._tokenizer(
                text.encode(),
                apsw.FTS5_TOKENIZE_DOCUMENT,
                None,
                include_offsets=False,
                include_colocated=False,
            )
        ]

    def _current(self) -> Snapshot:
        """The namespace's read-side state, reloaded when its generation moved
        (one small query per search)."""
        generation = self._generation()
        if self._snapshot is None or self._snapshot.generation != generation:
            self._snapshot = Snapshot(self.conn, self.namespace, generation)
        return self._snapshot

    def _matrix(self, generation: int) -> VectorMatrix:
        assert self.embedder is not None
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
