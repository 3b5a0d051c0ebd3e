"""Read side of the index: the BM25 lane (FTS5) and the embedding lane (numpy)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import apsw
import numpy as np

from bonsai.core.retrieval.documents import Lane
from bonsai.core.retrieval.query import fts_match_expression
from bonsai.services.retrieval.db import as_bytes, as_float, as_int
from bonsai.services.retrieval.embedder import Vectors


def bm25_lane(
    conn: apsw.Connection, fts: str, query: str, depth: int, ids: Mapping[int, str]
) -> Lane:
    """Best ``depth`` matches in one namespace's full-text table ``fts``, scores
    made positive (higher is better); ``ids`` maps its row ids to document ids
    (no join in the query)."""
    expression = fts_match_expression(query)
    if expression is None or depth <= 0:
        return Lane()
    return bm25_match(conn, fts, expression, depth, ids)


def bm25_match(
    conn: apsw.Connection, fts: str, expression: str, depth: int, ids: Mapping[int, str]
) -> Lane:
    """:func:`bm25_lane` for a ready ``MATCH`` expression."""
    if depth <= 0:
        return Lane()
    sql = f"SELECT rowid, bm25({fts}) AS s FROM {fts} WHERE {fts} MATCH ? ORDER BY s LIMIT ?"
    rows = conn.execute(sql, (expression, depth)).fetchall()
    hits = [(ids[r], -as_float(score)) for r, score in rows if isinstance(r, int) and r in ids]
    hits.sort(key=lambda h: (-h[1], h[0]))
    return Lane(hits=tuple(hits))


@dataclass(frozen=True)
class VectorMatrix:
    """All vectors of one namespace for one model, rows aligned with ``ids``."""

    generation: int
    model: str
    ids: tuple[str, ...]
    matrix: Vectors


def load_matrix(conn: apsw.Connection, namespace: str, model: str, generation: int) -> VectorMatrix:
    rows = conn.execute(
        "SELECT d.doc_id, v.dim, v.vec FROM vectors v JOIN docs d ON d.rowid = v.rowid "
        "WHERE d.namespace = ? AND v.model = ? ORDER BY d.rowid",
        (namespace, model),
    ).fetchall()
    if not rows:
        return VectorMatrix(generation, model, (), np.zeros((0, 0), dtype=np.float32))
    dim = as_int(rows[0][1])
    if any(as_int(row_dim) != dim for _, row_dim, _ in rows):
        raise ValueError(f"mixed vector sizes in namespace {namespace!r} for model {model!r}")
    # one buffer for all rows (a copy per row cost a tenth of a second at 10k)
    packed = b"".join(as_bytes(blob) for _, _, blob in rows)
    if len(packed) != len(rows) * dim * 4:
        raise ValueError(f"a stored vector of namespace {namespace!r} is not {dim} floats long")
    matrix = np.frombuffer(packed, dtype=np.float32).reshape(len(rows), dim)
    return VectorMatrix(generation, model, tuple(str(r[0]) for r in rows), matrix)


def _dot_rows(matrix: Vectors, query: Vectors) -> Vectors:
    """Row-wise dot products without BLAS threads: a matrix-vector product this
    small gains nothing from threading, and on a busy machine BLAS threads that
    compete for cores make it several times slower (and less predictable)."""
    return np.einsum("ij,j->i", matrix, query)


def embedding_lane(
    vectors: VectorMatrix, query_vector: Vectors, depth: int, background: Vectors | None = None
) -> Lane:
    """Brute-force cosine (rows are unit length): the best ``depth`` documents,
    plus the mean and spread of the cosines of all documents and of the
    ``background`` reference vectors as the query's background level."""
    n = len(vectors.ids)
    if n == 0 or depth <= 0:
        return Lane()
    query = query_vector.reshape(-1)
    cosines = _dot_rows(vectors.matrix, query)
    reference = cosines if background is None else np.concatenate([cosines, background @ query])
    take = min(depth, n)
    top = np.argpartition(-cosines, take - 1)[:take] if take < n else np.arange(n)
    ordered = sorted(top.tolist(), key=lambda i: (-float(cosines[i]), vectors.ids[i]))
    return Lane(
        hits=tuple((vectors.ids[i], float(cosines[i])) for i in ordered),
        background=float(reference.mean()),
        spread=float(reference.std()),
    )
