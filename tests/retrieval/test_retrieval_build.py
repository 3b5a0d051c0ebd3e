"""A bulk build stores exactly what writing the documents one by one stores.

The build path batches its work (one statement per table, row ids assigned in
one pass, the bodies just written embedded in one call, entity words in one
pass over the text). These tests hold it to the plain path: the same rows, the
same vectors, the same answers; and the stored entity words to the
three-pass definition they replaced.
"""

from __future__ import annotations

import re

import apsw
import numpy as np

from bonsai.core.retrieval.documents import Doc
from bonsai.core.retrieval.parts import _CALENDAR, _NAME_NEXT, _TOKEN, _entity_like, _opens_sentence
from bonsai.core.retrieval.query import indexable_text
from bonsai.core.retrieval.text import STOP_WORDS
from bonsai.services.retrieval import HybridIndex
from bonsai.services.retrieval.db import fts_table
from bonsai.services.retrieval.embedder import normalise_rows

PEOPLE = ["Ana Costa", "Hugo Delacroix", "Mei Tanaka", "Lars Berg", "Priya Nair"]
CITIES = ["Porto", "Tallinn", "Osaka", "Bergen", "Pune"]
JOBS = ["database administrator", "technical writer", "build engineer"]


def _docs() -> list[Doc]:
    docs: list[Doc] = []
    for i, (person, city) in enumerate(zip(PEOPLE, CITIES, strict=True)):
        first = person.split()[0]
        docs.append(
            Doc(
                id=f"job-{i}",
                text=f"{person} works as {JOBS[i % 3]} at Saffron Logistics.\n"
                f"Decision: the ledgerSync_{i} service keeps its data in NATS.",
                meta={"tier": "user", "updated": f"2026-0{i + 1}-14", "dates": []},
            )
        )
        docs.append(
            Doc(
                id=f"move-{i}",
                text=f"{first} moved to {city} in May 2026. On 14 March 2026 the "
                f"team in {city} agreed on retryBudget{i}.",
                meta={"tier": "project", "updated": None, "dates": ["2026-03-14"]},
            )
        )
    docs.append(Doc(id="plain", text="no capitals here, only words", meta={}))
    return docs


QUERIES = [
    "Which city did the technical writer from Saffron Logistics move to?",
    "Where does Ana live, and what is her job?",
    "ledger sync data store",
    "retry budget agreed in March 2026",
    "Tallinn",
]


def _old_entities(text: str, *, sentence_starts: bool) -> list[str]:
    """The entity pass before the build went to one pass (two calls of this,
    one inside another, per document)."""
    seen: dict[str, None] = {}
    for match in _TOKEN.finditer(text):
        word = match.group(0).strip("'-")
        if not word or not _entity_like(word):
            continue
        if word.lower() in STOP_WORDS or word.lower() in _CALENDAR:
            continue
        opens = _opens_sentence(text, match.start()) and not _NAME_NEXT.match(text, match.end())
        if opens != sentence_starts or (sentence_starts and not word[0].isupper()):
            continue
        seen.setdefault(word, None)
    return list(seen)


def _old_links(text: str) -> str:
    strong = dict.fromkeys(w.lower() for w in _old_entities(text, sentence_starts=False))
    named = set(_old_entities(text, sentence_starts=False))
    weak = dict.fromkeys(
        "~" + w.lower()
        for w in _old_entities(text, sentence_starts=True)
        if w not in named and w.lower() not in strong
    )
    return " ".join([*strong, *weak])


def _stored(conn: apsw.Connection, namespace: str) -> dict[str, tuple[object, ...]]:
    """Every stored row of a namespace by document id (row ids aside)."""
    fts = fts_table(namespace)
    rows = conn.execute(
        f"SELECT d.doc_id, d.hash, d.meta, d.links, d.terms, f.body, v.model, v.vec "
        f"FROM docs d JOIN {fts} f ON f.rowid = d.rowid "
        f"LEFT JOIN vectors v ON v.rowid = d.rowid WHERE d.namespace = ?",
        (namespace,),
    )
    return {str(row[0]): tuple(row[1:]) for row in rows}


def _answers(index: HybridIndex) -> list[list[tuple[str, float]]]:
    return [[(h.id, round(h.score, 9)) for h in index.search(q, 5)] for q in QUERIES]


class Renamed:
    """The real model under another id (what a model change looks like)."""

    def __init__(self, inner, model_id: str) -> None:
        self.inner, self._id = inner, model_id

    @property
    def model_id(self) -> str:
        return self._id

    def encode(self, texts):
        return self.inner.encode(texts)


def test_bulk_build_equals_one_document_at_a_time(index_conn, tiny_embedder) -> None:
    docs = _docs()
    bulk = HybridIndex(index_conn, "bulk", tiny_embedder)
    bulk.sync(docs, "fp")
    single = HybridIndex(index_conn, "single", tiny_embedder)
    for doc in docs:
        single.upsert([doc])
    assert _stored(index_conn, "bulk") == _stored(index_conn, "single")
    assert _answers(bulk) == _answers(single)
    assert all(_answers(bulk))

    # then an edit, an addition and a deletion, by sync and by single writes
    edited = [d for d in docs if d.id != "move-3"]
    edited[0] = Doc(id="job-0", text="Ana Costa now works as a florist in Porto.", meta={})
    edited.append(Doc(id="new", text="Lars Berg keeps bees near Bergen.", meta={"tier": "user"}))
    bulk.sync(edited, "fp2")
    single.upsert([edited[0]])
    single.upsert([edited[-1]])
    single.delete(["move-3"])
    assert _stored(index_conn, "bulk") == _stored(index_conn, "single")
    assert _answers(bulk) == _answers(single)


def test_stored_rows_are_what_each_document_gives_alone(index_conn, tiny_embedder) -> None:
    """Links as the three-pass definition gives them, the body with its
    identifier parts, the vector of that body encoded on its own."""
    docs = _docs()
    HybridIndex(index_conn, "ns", tiny_embedder).sync(docs, "fp")
    stored = _stored(index_conn, "ns")
    tokenizer = index_conn.fts5_tokenizer("porter", ["unicode61"])
    for doc in docs:
        _, _, links, terms, body, model, vec = stored[doc.id]
        assert links == _old_links(doc.text)
        assert body == indexable_text(doc.text)
        tokens = tokenizer(
            body.encode(),
            apsw.FTS5_TOKENIZE_DOCUMENT,
            None,
            include_offsets=False,
            include_colocated=False,
        )
        assert terms == " ".join(sorted({str(t) for t in tokens}))
        alone = normalise_rows(tiny_embedder.encode([body]))[0]
        assert model == tiny_embedder.model_id
        assert np.array_equal(np.frombuffer(vec, dtype=np.float32), alone)
    assert re.search(r"\bana\b", stored["job-0"][2]) and "~ana" in stored["move-0"][2]


def test_a_model_change_reembeds_the_stored_bodies(index_conn, tiny_embedder) -> None:
    """After a model change the vectors come from the stored bodies (read back
    in one query) and equal a fresh build's with that model."""
    docs = _docs()
    HybridIndex(index_conn, "ns", tiny_embedder).sync(docs, "fp")
    other = Renamed(tiny_embedder, "tiny-renamed")
    report = HybridIndex(index_conn, "ns", other).sync(docs, "fp")
    assert report.embedded == len(docs) and report.added == report.updated == 0
    HybridIndex(index_conn, "fresh", other).sync(docs, "fp")
    changed = {k: (v[4], v[5], v[6]) for k, v in _stored(index_conn, "ns").items() if v[5]}
    fresh = {k: (v[4], v[5], v[6]) for k, v in _stored(index_conn, "fresh").items()}
    assert changed == fresh
