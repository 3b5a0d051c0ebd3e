"""The retrieval documents of memory entries, each built once per file version.

A resync after one hand edit hands the index every entry of the merged view;
only the edited entry's document is built again (its text, its metadata and
the dates found in its body). The index, in turn, hashes only documents it has
not seen (see :class:`~bonsai.services.retrieval.index.HybridIndex`), so one
changed file costs one document, not the whole store.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from bonsai.core.retrieval.dates import body_dates, mentions_time
from bonsai.core.retrieval.documents import Doc
from bonsai.services.memory.entry import MemoryEntry


def entry_doc(entry: MemoryEntry) -> Doc:
    """What the index stores of one entry."""
    return Doc(
        id=entry.name,
        text=entry.search_text(),
        meta={
            "tier": entry.tier,
            "updated": entry.updated.isoformat() if entry.updated else None,
            "created": entry.created.isoformat() if entry.created else None,
            "dates": body_dates(entry.body),
            "timed": mentions_time(entry.body),
        },
    )


class EntryDocs:
    """Documents by entry name, kept while the entry's tier and bytes are unchanged."""

    def __init__(self) -> None:
        self._docs: dict[str, tuple[str, Doc]] = {}

    def iterate(self, entries: Iterable[MemoryEntry]) -> Iterator[Doc]:
        """The documents of ``entries`` in order (lazily: an index whose
        fingerprint already matches never asks for them); the cache keeps
        exactly these entries once the iteration is complete."""
        kept: dict[str, tuple[str, Doc]] = {}
        for entry in entries:
            version = f"{entry.tier}:{entry.digest}"
            cached = self._docs.get(entry.name)
            doc = cached[1] if cached is not None and cached[0] == version else entry_doc(entry)
            kept[entry.name] = (version, doc)
            yield doc
        self._docs = kept
