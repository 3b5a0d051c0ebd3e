"""The demo's before/after table: its stored session replayed offline, raw and managed.

The replay runs the same pipeline over the session's log twice per model call:
once with every stage off (raw: what an agent without bonsai would have sent)
and once managed, counting what a provider prefix cache could serve. It also
writes the HTML replay report.
"""

from __future__ import annotations

from pathlib import Path

from bonsai.core.replay.report import ReplayReport, render_html
from bonsai.services.config import load_settings
from bonsai.services.replay import build_config, open_readonly, replay, stored_source


def _pct(value: float) -> str:
    return f"{value * 100:.1f}%"


def table(report: ReplayReport) -> list[str]:
    raw_peak = max((t.raw_input_tokens for t in report.per_turn), default=0)
    raw_fit = (
        sum(t.raw_fits for t in report.per_turn) / len(report.per_turn) if report.per_turn else 1.0
    )
    rows = [
        ("input tokens sent", f"{report.raw_input_tokens:,}", f"{report.managed_input_tokens:,}"),
        ("saved", "", _pct(report.saved_fraction)),
        ("cache-eligible share", "", _pct(report.cache_hit_fraction)),
        ("cost ratio", "1.000", f"{report.cost_ratio:.3f}"),
        ("peak request", f"{raw_peak:,}", f"{report.peak_context_tokens:,}"),
        ("requests that fit", _pct(raw_fit), _pct(report.fit_fraction)),
    ]
    lines = [f"  {'':<22}{'raw':>10}  {'managed':>10}"]
    lines += [f"  {label:<22}{raw:>10}  {managed:>10}" for label, raw, managed in rows]
    return lines


def replay_lines(home: Path, session_id: str, model: str, window: int, html: Path) -> list[str]:
    """The table for the demo's session (replayed offline), and the HTML report written."""
    settings = load_settings(home).settings
    row = settings.providers.models[model]
    price = row.price_cached_input / row.price_input if row.price_input else 0.1
    config = build_config(
        model=model,
        window=window,
        settings=settings.context,
        cache_read_price=price,
        cache_dir=home / "cache" / "tiktoken",
        user_models=settings.providers.models,
    )
    conn = open_readonly(home)
    try:
        source = stored_source(conn, session_id)
    finally:
        conn.close()
    report = replay(source, config)
    html.write_text(render_html(report), encoding="utf-8")
    return [
        f"before/after — the session replayed offline, {report.turns} model requests, window "
        f"{report.window:,} (usable {report.usable_window:,}); cached input priced at "
        f"{price:g}× input (the model's prices):",
        *table(report),
    ]
