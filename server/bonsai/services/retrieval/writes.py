"""Write side of the index: upsert / delete documents and keep vectors in step."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import apsw

from bonsai.core.retrieval.documents import Doc
from bonsai.core.retrieval.parts import entities, sentence_start_names
from bonsai.core.retrieval.query import indexable_text
from bonsai.domain import content_hash
from bonsai.services.retrieval.embedder import Embedder, normalise_rows


@dataclass
class WriteCounts:
    """What one write pass changed (all zero when nothing had to be done)."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    embedded: int = 0

    @property
    def total(self) -> int:
        return self.added + self.updated + self.removed + self.embedded


def doc_hash(doc: Doc) -> str:
    meta = json.dumps(doc.meta, sort_keys=True, separators=(",", ":"))
    return content_hash(doc.text + "\x00" + meta)


Tokenize = Callable[[str], list[str]]


WEAK = "~"  # marks a stored link word that opened a sentence (see Snapshot.weak_links)


def features(body: str, text: str, tokenize: Tokenize) -> tuple[str, str]:
    """What the second hop reads of a document: its entity words (lower case,
    space-separated; a capitalised word that opened a sentence marked ``~``)
    and the set of its indexed terms as the full-text table sees them
    (``tokenize`` is the table's own tokenizer)."""
    strong = dict.fromkeys(word.lower() for word in entities(text))
    weak = dict.fromkeys(
        WEAK + w.lower() for w in sentence_start_names(text) if w.lower() not in strong
    )
    links = " ".join([*strong, *weak])
    return links, " ".join(sorted(set(tokenize(body))))


def existing_rows(conn: apsw.Connection, namespace: str) -> dict[str, tuple[int, str]]:
    rows = conn.execute("SELECT doc_id, rowid, hash FROM docs WHERE namespace = ?", (namespace,))
    return {str(doc_id): (int(rowid), str(h)) for doc_id, rowid, h in rows}


def upsert_docs(
    conn: apsw.Connection,
    namespace: str,
    fts: str,
    docs: Sequence[Doc],
    existing: dict[str, tuple[int, str]],
    counts: WriteCounts,
    tokenize: Tokenize,
) -> None:
    """Insert new documents and rewrite changed ones (their vectors are dropped)."""
    for doc in docs:
        h = doc_hash(doc)
        known = existing.get(doc.id)
        if known is not None and known[1] == h:
            continue
        meta = json.dumps(doc.meta, sort_keys=True, separators=(",", ":"))
        body = indexable_text(doc.text)
        links, terms = features(body, doc.text, tokenize)
        if known is None:
            conn.execute(
                "INSERT INTO docs(namespace, doc_id, hash, meta, links, terms) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (namespace, doc.id, h, meta, links, terms),
            )
            rowid = conn.last_insert_rowid()
            counts.added += 1
        else:
            rowid = known[0]
            conn.execute(
                "UPDATE docs SET hash = ?, meta = ?, links = ?, terms = ? WHERE rowid = ?",
                (h, meta, links, terms, rowid),
            )
            conn.execute(f"DELETE FROM {fts} WHERE rowid = ?", (rowid,))
            conn.execute("DELETE FROM vectors WHERE rowid = ?", (rowid,))
            counts.updated += 1
        conn.execute(f"INSERT INTO {fts}(rowid, body) VALUES (?, ?)", (rowid, body))
        existing[doc.id] = (rowid, h)


def delete_docs(
    conn: apsw.Connection, fts: str, rowids: Sequence[int], counts: WriteCounts
) -> None:
    for rowid in rowids:
        conn.execute("DELETE FROM docs WHERE rowid = ?", (rowid,))
        conn.execute(f"DELETE FROM {fts} WHERE rowid = ?", (rowid,))
        conn.execute("DELETE FROM vectors WHERE rowid = ?", (rowid,))
        counts.removed += 1


def embed_missing(
    conn: apsw.Connection,
    namespace: str,
    fts: str,
    embedder: Embedder,
    counts: WriteCounts,
    batch: int = 256,
) -> None:
    """Compute vectors for every document of the namespace lacking one for this
    model. The text embedded is the stored full-text body, so a rebuild after a
    model change sees exactly what the first build saw."""
    rows = conn.execute(
        "SELECT d.rowid FROM docs d LEFT JOIN vectors v ON v.rowid = d.rowid AND v.model = ? "
        "WHERE d.namespace = ? AND v.rowid IS NULL ORDER BY d.rowid",
        (embedder.model_id, namespace),
    )
    missing = [int(r[0]) for r in rows]
    for start in range(0, len(missing), batch):
        chunk = missing[start : start + batch]
        vectors = normalise_rows(embedder.encode([_stored_text(conn, fts, r) for r in chunk]))
        for rowid, vec in zip(chunk, vectors, strict=True):
            conn.execute(
                "INSERT OR REPLACE INTO vectors(rowid, model, dim, vec) VALUES (?, ?, ?, ?)",
                (rowid, embedder.model_id, int(vec.shape[0]), vec.tobytes()),
            )
        counts.embedded += len(chunk)


def _stored_text(conn: apsw.Connection, fts: str, rowid: int) -> str:
    row = conn.execute(f"SELECT body FROM {fts} WHERE rowid = ?", (rowid,)).fetchone()
    return str(row[0]) if row else ""


def bump_generation(conn: apsw.Connection, namespace: str, fingerprint: str | None) -> None:
    conn.execute(
        "INSERT INTO namespaces(namespace, fingerprint, generation) VALUES (?, ?, 1) "
        "ON CONFLICT(namespace) DO UPDATE SET fingerprint = excluded.fingerprint, "
        "generation = generation + 1",
        (namespace, fingerprint),
    )
