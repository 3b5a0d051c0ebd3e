"""One self-contained HTML page for a replayed corpus (pure, no I/O).

The page has the corpus total, a bar chart of every run (raw input against
managed input, with the cached part of the managed side), the per-run table,
and, per run, the same per-call chart as a single replay's page
(:func:`bonsai.core.replay.report.render_chart`). Inline CSS and SVG only: no
script, nothing fetched, the same bytes for the same reports.
"""

from __future__ import annotations

from collections.abc import Sequence

from bonsai.core.replay.report import (
    CSP,
    LEGEND,
    STYLE,
    ReplayReport,
    _e,
    _int,
    _pct,
    _turn_table,
    render_chart,
)

Run = tuple[str, str, ReplayReport]  # name, title, report
BAR_LEFT, BAR_WIDTH, ROW = 260, 660, 16


def _cost(report: ReplayReport) -> str:
    return f"{report.cost_ratio:.3f}"


def _totals(runs: Sequence[Run]) -> list[tuple[str, str]]:
    raw = sum(r.raw_input_tokens for _, _, r in runs)
    managed = sum(r.managed_input_tokens for _, _, r in runs)
    cached = sum(r.cached_input_tokens for _, _, r in runs)
    turns = sum(r.turns for _, _, r in runs)
    fits = sum(t.fits for _, _, r in runs for t in r.per_turn)
    rows = [
        ("Runs", _int(len(runs))),
        ("Model calls", _int(turns)),
        ("Raw input tokens", _int(raw)),
        ("Managed input tokens", _int(managed)),
        ("Cached input tokens", _int(cached)),
        ("Saved", _pct(1 - managed / raw if raw else 0.0)),
        ("Cache hit", _pct(cached / managed if managed else 0.0)),
        ("Calls that fit", _pct(fits / turns if turns else 1.0)),
        ("Rewrites", _int(sum(r.rewrites for _, _, r in runs))),
    ]
    priced = [r.priced for _, _, r in runs if r.priced is not None]
    if priced:
        rows.append(("Raw cost", f"${sum(p.raw_cost_usd for p in priced):.4f}"))
        rows.append(("Managed cost", f"${sum(p.managed_cost_usd for p in priced):.4f}"))
    return rows


def _bars(runs: Sequence[Run]) -> str:
    """One row per run: raw (red), managed (blue) and its cached part (light blue)."""
    top = max((r.raw_input_tokens for _, _, r in runs), default=0) or 1
    height = ROW * len(runs) * 2 + 24
    parts = [
        f'<svg class="chart corpus" viewBox="0 0 {BAR_LEFT + BAR_WIDTH + 80} {height}" '
        'role="img" aria-label="input tokens per run">'
    ]
    for i, (name, _title, report) in enumerate(runs):
        y = 12 + i * ROW * 2
        raw_w = BAR_WIDTH * report.raw_input_tokens / top
        managed_w = BAR_WIDTH * report.managed_input_tokens / top
        cached_w = BAR_WIDTH * report.cached_input_tokens / top
        tip = (
            f"{name}: raw {_int(report.raw_input_tokens)}, managed "
            f"{_int(report.managed_input_tokens)}, cached {_int(report.cached_input_tokens)}, "
            f"saved {_pct(report.saved_fraction)}, fit {_pct(report.fit_fraction)}"
        )
        label = name if len(name) <= 40 else name[:39] + "…"
        parts.append(
            f'<g class="run-bar" data-run="{_e(name)}"><title>{_e(tip)}</title>'
            f'<text class="bar-label" x="{BAR_LEFT - 8}" y="{y + ROW - 3}" '
            f'text-anchor="end">{_e(label)}</text>'
            f'<rect class="bar-raw" x="{BAR_LEFT}" y="{y}" width="{raw_w:.1f}" height="{ROW - 4}"/>'
            f'<rect class="bar-managed" x="{BAR_LEFT}" y="{y + ROW - 4}" '
            f'width="{managed_w:.1f}" height="{ROW - 4}"/>'
            f'<rect class="bar-cached" x="{BAR_LEFT}" y="{y + ROW - 4}" '
            f'width="{cached_w:.1f}" height="{ROW - 4}"/>'
            f'<text class="bar-label" x="{BAR_LEFT + raw_w + 6:.1f}" y="{y + ROW - 3}">'
            f"{_pct(report.saved_fraction)} saved</text></g>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _run_table(runs: Sequence[Run]) -> str:
    head = "".join(
        f"<th>{c}</th>"
        for c in (
            "run",
            "title",
            "calls",
            "raw",
            "managed",
            "cached",
            "saved",
            "fit",
            "rewrites",
            "cost",
        )
    )
    rows = []
    for name, title, r in runs:
        cells = [
            (name, ""),
            (title, ""),
            (_int(r.turns), "n"),
            (_int(r.raw_input_tokens), "n"),
            (_int(r.managed_input_tokens), "n"),
            (_int(r.cached_input_tokens), "n"),
            (_pct(r.saved_fraction), "n"),
            (_pct(r.fit_fraction), "n"),
            (_int(r.rewrites), "n"),
            (_cost(r), "n"),
        ]
        rows.append("<tr>" + "".join(f'<td class="{c}">{_e(v)}</td>' for v, c in cells) + "</tr>")
    return f'<table class="runs"><tr>{head}</tr>{"".join(rows)}</table>'


def _run_section(name: str, title: str, report: ReplayReport) -> str:
    return (
        f'<details class="run" data-run="{_e(name)}"><summary>{_e(name)} — {_e(title)} '
        f"({_int(report.turns)} calls, saved {_pct(report.saved_fraction)})</summary>"
        f"{render_chart(report)}{_turn_table(report)}</details>"
    )


def render_corpus_html(runs: Sequence[Run], *, title: str = "bonsai replay") -> str:
    """The corpus page; ``runs`` are (name, title, report) in display order."""
    legend = '<p class="legend">' + "".join(
        f'<span><i class="sw s-{css}"></i>{label}</span>' for css, label in LEGEND
    )
    summary = "".join(
        f'<tr><th scope="row">{_e(k)}</th><td class="n">{_e(v)}</td></tr>' for k, v in _totals(runs)
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{_e(title)}</h1>"
        f'<table class="summary">{summary}</table>'
        "<h2>Input per run</h2>"
        '<p class="legend"><span><i class="sw s-raw"></i>raw input</span>'
        '<span><i class="sw s-managed"></i>managed input</span>'
        '<span><i class="sw s-cached"></i>cached part</span></p>'
        f"{_bars(runs)}{_run_table(runs)}"
        f"<h2>Per call, run by run</h2>{legend}</p>"
        + "".join(_run_section(*run) for run in runs)
        + "</body></html>\n"
    )
