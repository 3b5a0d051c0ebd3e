"""What a query reads besides the full-text table, loaded once per generation.

One ``SELECT`` per generation of a namespace fills a :class:`Snapshot`: the
row id → document id map (so the BM25 lane needs no join), and each
document's metadata, entity words and indexed terms as stored strings. Those
are decoded only for the few documents a query looks at (its candidates and
the second hop's links), so a store that changes every turn (session
history) pays for one read, not for decoding every row.
"""

from __future__ import annotations

import json
from collections import defaultdict

import apsw
from pydantic import JsonValue


class Snapshot:
    """The read-side state of one namespace at one generation."""

    def __init__(self, conn: apsw.Connection, namespace: str, generation: int) -> None:
        self.generation = generation
        self.ids: dict[int, str] = {}
        self._raw: dict[str, tuple[str, str, str]] = {}
        rows = conn.execute(
            "SELECT rowid, doc_id, meta, links, terms FROM docs WHERE namespace = ?", (namespace,)
        )
        for rowid, doc_id, meta, links, terms in rows:
            self.ids[int(rowid)] = str(doc_id)
            self._raw[str(doc_id)] = (str(meta), str(links), str(terms))
        self._metas: dict[str, dict[str, JsonValue]] = {}
        self._terms: dict[str, frozenset[str]] = {}
        self._linked: dict[str, list[str]] | None = None
        self._average: float | None = None
        self.frequencies: dict[str, int] = {}  # token -> documents holding it (a cache)

    def __len__(self) -> int:
        return len(self._raw)

    def meta(self, doc_id: str) -> dict[str, JsonValue]:
        cached = self._metas.get(doc_id)
        if cached is None:
            raw = self._raw.get(doc_id)
            cached = json.loads(raw[0]) if raw is not None else {}
            self._metas[doc_id] = cached
        return cached

    def links(self, doc_id: str) -> list[str]:
        """The document's entity words (names, identifiers)."""
        raw = self._raw.get(doc_id)
        return [w for w in raw[1].split() if not w.startswith("~")] if raw is not None else []

    def weak_links(self, doc_id: str) -> list[str]:
        """Capitalised words that opened one of the document's sentences ("Ana
        moved to Porto", "Decision: …"): names only when :meth:`linked` finds
        them as entity words of some document."""
        raw = self._raw.get(doc_id)
        return [w[1:] for w in raw[1].split() if w.startswith("~")] if raw is not None else []

    def terms(self, doc_id: str) -> frozenset[str]:
        cached = self._terms.get(doc_id)
        if cached is None:
            raw = self._raw.get(doc_id)
            cached = frozenset(raw[2].split()) if raw is not None else frozenset()
            self._terms[doc_id] = cached
        return cached

    def average_terms(self) -> float:
        """The mean number of distinct indexed terms of a document."""
        if self._average is None:
            total = sum(raw[2].count(" ") + 1 for raw in self._raw.values() if raw[2])
            self._average = total / max(len(self._raw), 1)
        return self._average

    def linked(self, word: str) -> list[str]:
        """The documents whose entity words include ``word`` (an inverted map
        built on first use, once per generation)."""
        if self._linked is None:
            inverted: defaultdict[str, list[str]] = defaultdict(list)
            for doc_id, (_, links, _) in self._raw.items():
                for link in links.split():
                    if not link.startswith("~"):
                        inverted[link].append(doc_id)
            self._linked = dict(inverted)
        return self._linked.get(word, [])
