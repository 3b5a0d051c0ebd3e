"""The corpus side of ``bonsai replay``: the progress bar, the per-run table and the total."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from bonsai.services.replay.corpus import FileResult, RunResult, Tally

COLUMNS = ("run", "calls", "raw", "managed", "cached", "saved", "fit", "rewrites", "cost")


class Progress:
    """A one-line progress bar on stderr (redrawn in place on a terminal, a line
    every tenth of the way otherwise)."""

    def __init__(self, total: int, *, enabled: bool = True, out: TextIO | None = None) -> None:
        self.total, self.done, self.runs = total, 0, 0
        self.out = out or sys.stderr
        self.enabled = enabled and total > 1
        self.tty = self.out.isatty()
        self.started = time.monotonic()
        self._last_tenth = -1

    def advance(self, result: FileResult) -> None:
        self.done += 1
        self.runs += len(result.runs)
        if not self.enabled:
            return
        tenth = self.done * 10 // self.total
        if not self.tty and tenth == self._last_tenth and self.done != self.total:
            return
        self._last_tenth = tenth
        width = 30
        filled = width * self.done // self.total
        bar = "#" * filled + "." * (width - filled)
        elapsed = time.monotonic() - self.started
        line = f"replay [{bar}] {self.done}/{self.total} files, {self.runs} runs, {elapsed:.0f} s"
        self.out.write(("\r" + line) if self.tty else line + "\n")
        self.out.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            self.out.write("\n")
            self.out.flush()


def _pct(value: float) -> str:
    return f"{value * 100:.1f}%"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _cells(name: str, tally: Tally, price: float) -> list[str]:
    return [
        name,
        f"{tally.turns:,}",
        f"{tally.raw:,}",
        f"{tally.managed:,}",
        f"{tally.cached:,}",
        _pct(tally.saved()),
        _pct(tally.fit()),
        f"{tally.rewrites:,}",
        f"{tally.cost_ratio(price):.3f}",
    ]


def run_tally(result: RunResult) -> Tally:
    report = result.report
    return Tally(
        turns=report.turns,
        fits=sum(t.fits for t in report.per_turn),
        raw=report.raw_input_tokens,
        managed=report.managed_input_tokens,
        cached=report.cached_input_tokens,
        raw_cached=result.raw_cached,
        rewrites=report.rewrites,
    )


def corpus_table(runs: list[RunResult], total: Tally, price: float) -> list[str]:
    """One row per run and the total; ``cost`` is the managed/raw input cost ratio."""
    rows = [_cells(_clip(r.name, 44), run_tally(r), price) for r in runs]
    rows.append(_cells(f"total ({len(runs)} runs)", total, price))
    widths = [max(len(row[i]) for row in [list(COLUMNS), *rows]) for i in range(len(COLUMNS))]

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        return "  ".join([first, *(c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))])

    out = [line(list(COLUMNS)), "  ".join("-" * w for w in widths)]
    out += [line(row) for row in rows[:-1]]
    out += ["  ".join("-" * w for w in widths), line(rows[-1])]
    if total.raw_usd:
        out.append(f"priced: raw ${total.raw_usd:.4f}, managed ${total.managed_usd:.4f}")
    return out


def total_json(total: Tally, runs: int, price: float) -> dict[str, Any]:
    """The total line of ``--json`` (camelCase, token-weighted over every call)."""
    out: dict[str, Any] = {
        "runs": runs,
        "turns": total.turns,
        "rawInputTokens": total.raw,
        "managedInputTokens": total.managed,
        "cachedInputTokens": total.cached,
        "savedFraction": total.saved(),
        "cacheHitFraction": total.hit(),
        "costRatio": total.cost_ratio(price),
        "fitFraction": total.fit(),
        "rewrites": total.rewrites,
        "pipelineMsP50": total.p50(),
        "pipelineMsP95": total.p95(),
    }
    if total.raw_usd:
        out |= {
            "rawCostUsd": round(total.raw_usd, 6),
            "managedCostUsd": round(total.managed_usd, 6),
        }
    return out
