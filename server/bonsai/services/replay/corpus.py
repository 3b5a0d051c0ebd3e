"""Replaying a folder of recordings and adding the results up (for benchmarks).

Aggregates are token-weighted over every model call of every run: a saved
fraction of 0.4 means 40% of all input tokens across the corpus.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from bonsai.core.context.expiry import EXPIRY_KIND
from bonsai.core.pricing import FamilyName
from bonsai.core.replay_report import REWRITE_KINDS, percentile
from bonsai.services.importers import import_file
from bonsai.services.replay.billing import Bill, cost
from bonsai.services.replay.loss import Loss, measure_loss
from bonsai.services.replay.runner import ReplayConfig, StepRow, replay_steps
from bonsai.services.replay.source import ReplaySource, source_from_messages

SUFFIXES = (".traj", ".jsonl", ".json", ".md")
NOT_RECORDINGS = ("manifest.json",)  # a corpus's own description of itself
SMALL = 20  # a folder of at most this many recordings is never subsetted


def recording_files(folder: Path) -> list[Path]:
    """The recordings under ``folder``, sorted (READMEs and manifests left out)."""
    return [
        p
        for p in sorted(folder.rglob("*"))
        if p.is_file()
        and p.suffix in SUFFIXES
        and not p.name.lower().startswith("readme")
        and p.name not in NOT_RECORDINGS
    ]


def recordings(folder: Path) -> Iterator[tuple[str, Path, int]]:
    """(name, path, run) of every run of every recording under ``folder``, sorted."""
    for path in recording_files(folder):
        runs = import_file(path).runs
        for run in range(runs):
            name = path.name if runs == 1 else f"{path.name}#{run}"
            yield name, path, run


@dataclass
class Tally:
    """Sums over many replayed calls."""

    turns: int = 0
    fits: int = 0
    raw: int = 0
    managed: int = 0
    cached: int = 0
    raw_cached: int = 0
    rewrites: int = 0  # calls that rewrote content a warm cache held (paid rewrites)
    expiry_rewrites: int = 0  # calls that rewrote at cache expiry (free)
    ms: list[float] = field(default_factory=list)
    raw_bills: list[Bill] = field(default_factory=list)
    bills: list[Bill] = field(default_factory=list)

    def add(self, rows: list[StepRow], rewrite_kinds: frozenset[str]) -> None:
        for row in rows:
            turn = row.turn
            self.turns += 1
            self.fits += turn.fits
            self.raw += turn.raw_input_tokens
            self.managed += turn.managed_input_tokens
            self.cached += turn.cached_input_tokens
            self.raw_cached += row.raw_cached
            self.ms.append(turn.pipeline_ms)
            kinds = {e.split(":", 1)[0].strip() for e in turn.events}
            if EXPIRY_KIND in kinds:
                self.expiry_rewrites += 1
            else:
                self.rewrites += bool(kinds & rewrite_kinds)
            if row.raw_bill is not None and row.bill is not None:
                self.raw_bills.append(row.raw_bill)
                self.bills.append(row.bill)

    def saved(self) -> float:
        return 1 - self.managed / self.raw if self.raw else 0.0

    def hit(self) -> float:
        return self.cached / self.managed if self.managed else 0.0

    def cost_ratio(self, cache_read_price: float) -> float:
        raw = self.raw - (1 - cache_read_price) * self.raw_cached
        managed = self.managed - (1 - cache_read_price) * self.cached
        return managed / raw if raw else 1.0

    def family_cost_ratio(self, family: FamilyName) -> float:
        """Managed cost over raw cost under ``family``'s billing rule."""
        raw = cost(self.raw_bills, family)
        return cost(self.bills, family) / raw if raw else 1.0

    def rewrites_per_100(self) -> float:
        return 100 * self.rewrites / self.turns if self.turns else 0.0

    def fit(self) -> float:
        return self.fits / self.turns if self.turns else 1.0

    def p50(self) -> float:
        return percentile(self.ms, 50)

    def p95(self) -> float:
        return percentile(self.ms, 95)


def replay_recording(path: Path, run: int, config: ReplayConfig) -> list[StepRow]:
    return replay_steps(source_from_messages(import_file(path, run=run).messages), config)


def load_sources(folders: list[Path], every: int = 1) -> list[ReplaySource]:
    """Every run of the recordings under ``folders``; ``every`` > 1 keeps every
    ``every``-th file of each folder of more than ``SMALL`` recordings (a
    deterministic, evenly spread subset; small folders are taken whole)."""
    out: list[ReplaySource] = []
    for folder in folders:
        files = recording_files(folder)
        for path in files[::every] if len(files) > SMALL else files:
            first = import_file(path)
            for run in range(first.runs):
                session = first if run == 0 else import_file(path, run=run)
                out.append(source_from_messages(session.messages, title=session.title))
    return out


def measure(sources: list[ReplaySource], config: ReplayConfig) -> tuple[Tally, Loss]:
    """The tally and the needed-later loss of ``config`` over ``sources``."""
    tally, loss = Tally(), Loss()
    for source in sources:
        rows = replay_steps(source, config)
        tally.add(rows, REWRITE_KINDS)
        loss.add(measure_loss(source, rows, config.counter))
    return tally, loss
