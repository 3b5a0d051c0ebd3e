"""Counting the record kinds an importer does not read, for one warning each."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class Skipped:
    """Record kinds left out of an import, counted by kind."""

    source: str
    counts: Counter[str] = field(default_factory=Counter)

    def add(self, kind: str, n: int = 1) -> None:
        self.counts[kind] += n

    def report(self, warnings: list[str]) -> None:
        """One warning naming every kind left out and how often, most frequent first."""
        if not self.counts:
            return
        total = sum(self.counts.values())
        kinds = ", ".join(f"{kind!r} ×{n}" for kind, n in self.counts.most_common())
        warnings.append(
            f"{self.source}: left out {total} record(s) of kinds it does not read: {kinds}"
        )
