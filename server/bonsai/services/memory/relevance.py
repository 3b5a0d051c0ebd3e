"""Which search hits are relevant enough to spend context on.

Search membership (a keyword match, or a confident embedding match) is
necessary but for injection not sufficient: a keyword hit must also share at
least two distinct content stems with the user's message (or all of them when
the message has only one), so a passing word such as "tests" in "ok, run the
tests" does not pull an entry in. Hits the embedding lane vouches for pass on
that evidence alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bonsai.core.retrieval.documents import Hit
from bonsai.core.retrieval.text import shared_stems, stemmed_set
from bonsai.services.memory.entry import MemoryEntry

MIN_SHARED_STEMS = 2


def relevant_for_injection(
    user_text: str, hits: Sequence[Hit], entries: Mapping[str, MemoryEntry]
) -> list[tuple[MemoryEntry, float]]:
    needed = min(MIN_SHARED_STEMS, len(stemmed_set(user_text, expand=True)))
    ranked: list[tuple[MemoryEntry, float]] = []
    for hit in hits:
        entry = entries.get(hit.id)
        if entry is None:
            continue
        vouched = hit.lanes.embedding is not None
        if vouched or (needed and shared_stems(user_text, entry.search_text()) >= needed):
            ranked.append((entry, hit.score))
    return ranked
