"""Write side of the index: upsert / delete documents and keep vectors in step."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import apsw

from bonsai.core.retrieval.documents import Doc
from bonsai.core.retrieval.parts import entity_words
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
    return _hash(doc.text, _meta_json(doc))


def _meta_json(doc: Doc) -> str:
    return json.dumps(doc.meta, sort_keys=True, separators=(",", ":"))


def _hash(text: str, meta: str) -> str:
    return content_hash(text + "\x00" + meta)


Tokenize = Callable[[str], list[str]]


WEAK = "~"  # marks a stored link word that opened a sentence (see Snapshot.weak_links)


def features(body: str, text: str, tokenize: Tokenize) -> tuple[str, str]:
    """What the second hop reads of a document: its entity words (lower case,
    space-separated; a capitalised word that opened a sentence marked ``~``)
    and the set of its indexed terms as the full-text table sees them
    (``tokenize`` is the table's own tokenizer)."""
    named, opening = entity_words(text)
    strong = dict.fromkeys(word.lower() for word in named)
    weak = dict.fromkeys(WEAK + w.lower() for w in opening if w.lower() not in strong)
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
    hash_of: Callable[[Doc], str] = doc_hash,
) -> dict[int, str]:
    """Insert new documents and rewrite changed ones (their vectors are dropped).

    One statement per table for the whole pass (``executemany``); new rows get
    the row ids SQLite would give them one by one. Returns the full-text body
    of each row written, for :func:`embed_missing`. ``hash_of`` gives a
    document's :func:`doc_hash` (a caller may remember it per document)."""
    added: list[tuple[int, str, str, str, str, str, str]] = []
    changed: list[tuple[str, str, str, str, int]] = []
    bodies: dict[int, str] = {}
    next_row = 0
    for doc in docs:
        h = hash_of(doc)
        known = existing.get(doc.id)
        if known is not None and known[1] == h:
            continue
        meta = _meta_json(doc)
        body = indexable_text(doc.text)
        links, terms = features(body, doc.text, tokenize)
        if known is None:
            if not next_row:
                next_row = _last_rowid(conn) + 1
            rowid, next_row = next_row, next_row + 1
            added.append((rowid, namespace, doc.id, h, meta, links, terms))
            counts.added += 1
        else:
            rowid = known[0]
            changed.append((h, meta, links, terms, rowid))
            counts.updated += 1
        bodies[rowid] = body
        existing[doc.id] = (rowid, h)
    if changed:
        conn.executemany(
            "UPDATE docs SET hash = ?, meta = ?, links = ?, terms = ? WHERE rowid = ?", changed
        )
        stale = [(row[-1],) for row in changed]
        conn.executemany(f"DELETE FROM {fts} WHERE rowid = ?", stale)
        conn.executemany("DELETE FROM vectors WHERE rowid = ?", stale)
    if added:
        conn.executemany(
            "INSERT INTO docs(rowid, namespace, doc_id, hash, meta, links, terms) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            added,
        )
    if bodies:
        conn.executemany(f"INSERT INTO {fts}(rowid, body) VALUES (?, ?)", list(bodies.items()))
    return bodies


def _last_rowid(conn: apsw.Connection) -> int:
    row = conn.execute("SELECT max(rowid) FROM docs").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def delete_docs(
    conn: apsw.Connection, fts: str, rowids: Sequence[int], counts: WriteCounts
) -> None:
    rows = [(rowid,) for rowid in rowids]
    conn.executemany("DELETE FROM docs WHERE rowid = ?", rows)
    conn.executemany(f"DELETE FROM {fts} WHERE rowid = ?", rows)
    conn.executemany("DELETE FROM vectors WHERE rowid = ?", rows)
    counts.removed += len(rows)


def embed_missing(
    conn: apsw.Connection,
    namespace: str,
    fts: str,
    embedder: Embedder,
    counts: WriteCounts,
    bodies: Mapping[int, str] | None = None,
    batch: int = 1024,
) -> None:
    """Compute vectors for every document of the namespace lacking one for this
    model. The text embedded is the stored full-text body (``bodies`` holds the
    ones just written; the others, after a model change, are read back in one
    query), so a rebuild after a model change sees exactly what the first
    build saw."""
    rows = conn.execute(
        "SELECT d.rowid FROM docs d LEFT JOIN vectors v ON v.rowid = d.rowid AND v.model = ? "
        "WHERE d.namespace = ? AND v.rowid IS NULL ORDER BY d.rowid",
        (embedder.model_id, namespace),
    )
    missing = [int(r[0]) for r in rows]
    known = dict(bodies or {})
    if any(rowid not in known for rowid in missing):
        stored = conn.execute(f"SELECT rowid, body FROM {fts}")
        known.update({int(rowid): str(body) for rowid, body in stored if rowid not in known})
    model = embedder.model_id
    for start in range(0, len(missing), batch):
        chunk = missing[start : start + batch]
        vectors = normalise_rows(embedder.encode([known.get(r, "") for r in chunk]))
        conn.executemany(
            "INSERT OR REPLACE INTO vectors(rowid, model, dim, vec) VALUES (?, ?, ?, ?)",
            [
                (rowid, model, int(vec.shape[0]), vec.tobytes())
                for rowid, vec in zip(chunk, vectors, strict=True)
            ],
        )
        counts.embedded += len(chunk)


def bump_generation(conn: apsw.Connection, namespace: str, fingerprint: str | None) -> None:
    conn.execute(
        "INSERT INTO namespaces(namespace, fingerprint, generation) VALUES (?, ?, 1) "
        "ON CONFLICT(namespace) DO UPDATE SET fingerprint = excluded.fingerprint, "
        "generation = generation + 1",
        (namespace, fingerprint),
    )
