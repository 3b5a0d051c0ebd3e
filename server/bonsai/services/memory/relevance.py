"""Which search hits are relevant enough to spend context on.

Search membership (a keyword match, or a confident embedding match) is
necessary but for injection not sufficient: a keyword hit must also share at
least two distinct content stems with the user's message (or all of them when
the message has only one), so a passing word such as "tests" in "ok, run the
tests" does not pull an entry in. Hits the embedding lane vouches for pass on
that evidence alone.

A hit the second hop brought in (``Hit.via``: "Ana moved to Porto", reached
from "Ana Costa works as a technical writer at Lumen Grid" through the name)
often shares no word with the message at all; it is judged by the path that
found it: it passes when the entry it was reached from passes on its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bonsai.core.retrieval.documents import Hit
from bonsai.core.retrieval.text import shared_stems, stemmed_set
from bonsai.services.memory.entry import MemoryEntry

MIN_SHARED_STEMS = 2


def relevant_for_injection(
    user_text: str,
    hits: Sequence[Hit],
    entries: Mapping[str, MemoryEntry],
    sources: Mapping[str, MemoryEntry] | None = None,
) -> list[tuple[MemoryEntry, float]]:
    """The hits worth injecting, in rank order. ``sources`` holds the entries a
    second-hop hit may have been reached from when they are not among ``hits``
    (``entries`` is looked in first)."""
    needed = min(MIN_SHARED_STEMS, len(stemmed_set(user_text, expand=True)))
    by_id = {hit.id: hit for hit in hits}

    def passes(hit: Hit | None, entry: MemoryEntry) -> bool:
        if hit is not None and hit.lanes.embedding is not None:
            return True
        return bool(needed) and shared_stems(user_text, entry.search_text()) >= needed

    ranked: list[tuple[MemoryEntry, float]] = []
    for hit in hits:
        entry = entries.get(hit.id)
        if entry is None:
            continue
        ok = passes(hit, entry)
        if not ok and hit.via is not None:
            source = entries.get(hit.via) or (sources or {}).get(hit.via)
            ok = source is not None and passes(by_id.get(hit.via), source)
        if ok:
            ranked.append((entry, hit.score))
    return ranked
