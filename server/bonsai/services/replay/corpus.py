"""Replaying a folder of recordings and adding the results up (for benchmarks).

Aggregates are token-weighted over every model call of every run: a saved
fraction of 0.4 means 40% of all input tokens across the corpus.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from bonsai.core.context.expiry import EXPIRY_KIND
from bonsai.core.context.pricing import FamilyName
from bonsai.core.replay.report import REWRITE_KINDS, ReplayReport, percentile
from bonsai.services.importers import ImportFormatError, import_file, import_runs
from bonsai.services.replay.billing import Bill, cost
from bonsai.services.replay.loss import Loss, measure_loss
from bonsai.services.replay.policies import PolicyName
from bonsai.services.replay.runner import ReplayConfig, StepRow, replay_steps, summarize_rows
from bonsai.services.replay.setup import build_config
from bonsai.services.replay.source import ReplaySource
from bonsai.services.replay.stored import imported_source
from bonsai.settings import ContextSettings, ModelInfo, PresetName, ToolOutputSettings

SUFFIXES = (".traj", ".jsonl", ".json", ".md")
NOT_RECORDINGS = ("manifest.json",)  # a corpus's own description of itself
SMALL = 20  # a folder of at most this many recordings is never subsetted


def recordings_under(folder: Path) -> list[Path]:
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
    for path in recordings_under(folder):
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
    raw_usd: float = 0.0
    managed_usd: float = 0.0

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
    return replay_steps(imported_source(import_file(path, run=run)), config)


# ------------------------------------------------------------ corpus replay (CLI, bench)
@dataclass(frozen=True)
class ConfigSpec:
    """What a worker process needs to build its own :class:`ReplayConfig`
    (token counters are not sent between processes)."""

    model: str
    window: int | None = None
    preset: PresetName | None = None
    policy: PolicyName = "managed"
    cache_read_price: float = 0.1
    context: ContextSettings = field(default_factory=ContextSettings)
    tool_output: ToolOutputSettings = field(default_factory=ToolOutputSettings)
    user_models: dict[str, ModelInfo] = field(default_factory=dict)

    def build(self) -> ReplayConfig:
        return build_config(
            model=self.model,
            window=self.window,
            preset=self.preset,
            settings=self.context,
            policy=self.policy,
            cache_read_price=self.cache_read_price,
            user_models=self.user_models or None,
            tool_output=self.tool_output,
        )


@dataclass(frozen=True)
class RunResult:
    """One replayed run of one recording."""

    source: str
    run: int
    runs: int
    title: str
    format: str
    report: ReplayReport
    raw_cached: int
    warnings: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        name = Path(self.source).name
        return name if self.runs == 1 else f"{name}#{self.run}"


@dataclass(frozen=True)
class FileResult:
    source: str
    runs: list[RunResult]
    error: str | None = None


def recording_files(paths: list[Path]) -> list[Path]:
    """The files named, and every file under the folders named, sorted per folder."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.is_file() and _candidate(p)))
        else:
            files.append(path)
    return files


def _candidate(path: Path) -> bool:
    return not path.name.startswith(".") and not path.name.lower().startswith("readme")


_LAST: list[tuple[ConfigSpec, ReplayConfig]] = []  # a worker builds its config once


def config_of(spec: ConfigSpec) -> ReplayConfig:
    """The config ``spec`` names, built once per process (raises ``ValueError``)."""
    if _LAST and _LAST[0][0] == spec:
        return _LAST[0][1]
    config = spec.build()
    _LAST[:] = [(spec, config)]
    return config


def replay_file(
    path: Path, spec: ConfigSpec, run: int | None = None, fmt: str = "auto"
) -> FileResult:
    """Replay every run of ``path`` (or only ``run``); an unreadable recording is
    an error row, never an exception (a corpus goes on past one bad file)."""
    try:
        imported = [import_file(path, fmt, run)] if run is not None else import_runs(path, fmt)
    except ImportFormatError as error:
        return FileResult(str(path), [], str(error))
    config = config_of(spec)
    results: list[RunResult] = []
    for session in imported:
        source = imported_source(session)
        rows = replay_steps(source, config)
        report = summarize_rows(rows, config, source.session_id)
        results.append(
            RunResult(
                source=str(path),
                run=session.run,
                runs=session.runs,
                title=session.title,
                format=session.format,
                report=report,
                raw_cached=sum(r.raw_cached for r in rows),
                warnings=tuple(session.warnings),
            )
        )
    return FileResult(str(path), results)


def replay_corpus(
    files: list[Path],
    spec: ConfigSpec,
    *,
    run: int | None = None,
    fmt: str = "auto",
    jobs: int = 1,
    progress: Callable[[FileResult], None] | None = None,
) -> list[FileResult]:
    """Replay ``files`` with at most ``jobs`` worker processes (results in file order)."""
    if jobs <= 1 or len(files) <= 1:
        out = []
        for path in files:
            result = replay_file(path, spec, run, fmt)
            if progress is not None:
                progress(result)
            out.append(result)
        return out
    context = multiprocessing.get_context("spawn")
    done: dict[str, FileResult] = {}
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        futures = [pool.submit(replay_file, path, spec, run, fmt) for path in files]
        for future in as_completed(futures):
            result = future.result()
            done[result.source] = result
            if progress is not None:
                progress(result)
    return [done[str(path)] for path in files]


def total_of(results: list[RunResult]) -> Tally:
    """The sums of many runs (token-weighted), for the total row."""
    tally = Tally()
    for result in results:
        report = result.report
        tally.turns += report.turns
        tally.fits += sum(t.fits for t in report.per_turn)
        tally.raw += report.raw_input_tokens
        tally.managed += report.managed_input_tokens
        tally.cached += report.cached_input_tokens
        tally.raw_cached += result.raw_cached
        tally.rewrites += report.rewrites
        tally.ms.extend(t.pipeline_ms for t in report.per_turn)
        if report.priced is not None:
            tally.raw_usd += report.priced.raw_cost_usd
            tally.managed_usd += report.priced.managed_cost_usd
    return tally


def load_sources(folders: list[Path], every: int = 1) -> list[ReplaySource]:
    """Every run of the recordings under ``folders``; ``every`` > 1 keeps every
    ``every``-th file of each folder of more than ``SMALL`` recordings (a
    deterministic, evenly spread subset; small folders are taken whole)."""
    out: list[ReplaySource] = []
    for folder in folders:
        files = recordings_under(folder)
        for path in files[::every] if len(files) > SMALL else files:
            first = import_file(path)
            for run in range(first.runs):
                session = first if run == 0 else import_file(path, run=run)
                out.append(imported_source(session))
    return out


def measure(sources: list[ReplaySource], config: ReplayConfig) -> tuple[Tally, Loss]:
    """The tally and the needed-later loss of ``config`` over ``sources``."""
    tally, loss = Tally(), Loss()
    for source in sources:
        rows = replay_steps(source, config)
        tally.add(rows, REWRITE_KINDS)
        loss.add(measure_loss(source, rows, config))
    return tally, loss
