"""The replay report: per-turn rows, their summary, and a self-contained HTML page.

Pure: no I/O, no clock. A replay feeds a recorded session through the context
pipeline turn by turn and records, for each model call, how many input tokens
the unmanaged ("raw") and the managed request would carry and how much of the
managed one is a cache-eligible prefix. ``summarize`` turns those rows into
the aggregate figures; ``render_html`` draws them. Every JSON field is
documented in ``docs/replay.md``.
"""

from __future__ import annotations

import html
import math
from collections import Counter
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

REWRITE_KINDS = frozenset(
    {"stub", "compaction", "archive", "fold", "drop", "restore", "summary", "evict"}
)


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, frozen=True, extra="forbid"
    )


class ReplayTurn(_Model):
    """One model call of the replay."""

    step: int = Field(ge=0)
    raw_input_tokens: int = Field(ge=0)
    managed_input_tokens: int = Field(ge=0)
    cached_input_tokens: int = Field(ge=0)
    fits: bool
    raw_fits: bool
    events: list[str] = Field(default_factory=list)
    pipeline_ms: float = Field(ge=0)
    saved_tokens: int = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _cached_within_managed(self) -> ReplayTurn:
        if self.cached_input_tokens > self.managed_input_tokens:
            raise ValueError(
                f"turn {self.step}: cachedInputTokens ({self.cached_input_tokens}) exceeds "
                f"managedInputTokens ({self.managed_input_tokens})"
            )
        return self


class ModelPrice(_Model):
    """USD per million input tokens, uncached and read from cache."""

    model: str
    input_usd_per_mtok: float = Field(ge=0)
    cached_input_usd_per_mtok: float = Field(ge=0)


class PricedCost(_Model):
    model: str
    raw_cost_usd: float = Field(ge=0)
    managed_cost_usd: float = Field(ge=0)


class ReplayReport(_Model):
    turns: int = Field(ge=0)
    raw_input_tokens: int = Field(ge=0)
    managed_input_tokens: int = Field(ge=0)
    cached_input_tokens: int = Field(ge=0)
    saved_fraction: float
    cache_hit_fraction: float = Field(ge=0, le=1)
    cost_ratio: float = Field(ge=0)
    fit_fraction: float = Field(ge=0, le=1)
    rewrites: int = Field(ge=0)
    peak_context_tokens: int = Field(ge=0)
    window: int = Field(gt=0)
    usable_window: int = Field(gt=0)
    pipeline_ms_p50: float = Field(ge=0)
    pipeline_ms_p95: float = Field(ge=0)
    session_id: str = ""
    events: dict[str, int] = Field(default_factory=dict)
    per_turn: list[ReplayTurn] = Field(default_factory=list)
    priced: PricedCost | None = None
    timing: str = ""  # where the calls' idle times came from (timestamps or the pause model)


def report_json(report: ReplayReport) -> str:
    """The report as JSON with its documented camelCase names (``priced`` only
    when present). Identical reports give identical bytes."""
    return report.model_dump_json(by_alias=True, exclude_none=True, indent=2)


def event_kind(event: str) -> str:
    """``"stub: 3 reads"`` → ``"stub"``."""
    return event.split(":", 1)[0].strip()


def percentile(values: Iterable[float], p: float) -> float:
    """Nearest-rank percentile (``p`` in 0..100); 0 for no values."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return float(ordered[rank - 1])


def _cost(inputs: int, cached: int, cache_read_price: float) -> float:
    return (inputs - cached) + cache_read_price * cached


def _ratio(numerator: float, denominator: float, *, empty: float) -> float:
    return numerator / denominator if denominator else empty


def summarize(
    per_turn: Sequence[ReplayTurn],
    *,
    window: int,
    usable: int,
    cache_read_price: float,
    raw_cached: Sequence[int],
    session_id: str = "",
    price: ModelPrice | None = None,
    rewrite_kinds: frozenset[str] = REWRITE_KINDS,
    timing: str = "",
) -> ReplayReport:
    """Aggregate per-turn rows into a report.

    ``cache_read_price`` is the price of a cached input token as a fraction of
    an uncached one (0.1 means a tenth); ``raw_cached[i]`` is the cache-eligible
    prefix of the raw request of turn ``i``."""
    _check_inputs(per_turn, window, usable, cache_read_price, raw_cached)
    raw = sum(t.raw_input_tokens for t in per_turn)
    managed = sum(t.managed_input_tokens for t in per_turn)
    cached = sum(t.cached_input_tokens for t in per_turn)
    raw_cost = _cost(raw, sum(raw_cached), cache_read_price)
    managed_cost = _cost(managed, cached, cache_read_price)
    kinds = [sorted({event_kind(e) for e in t.events}) for t in per_turn]
    counts = Counter(event_kind(e) for t in per_turn for e in t.events)
    return ReplayReport(
        turns=len(per_turn),
        raw_input_tokens=raw,
        managed_input_tokens=managed,
        cached_input_tokens=cached,
        saved_fraction=1 - _ratio(managed, raw, empty=1.0),
        cache_hit_fraction=_ratio(cached, managed, empty=0.0),
        cost_ratio=_ratio(managed_cost, raw_cost, empty=1.0),
        fit_fraction=_ratio(sum(t.fits for t in per_turn), len(per_turn), empty=1.0),
        rewrites=sum(1 for k in kinds if rewrite_kinds.intersection(k)),
        peak_context_tokens=max((t.managed_input_tokens for t in per_turn), default=0),
        window=window,
        usable_window=usable,
        pipeline_ms_p50=percentile((t.pipeline_ms for t in per_turn), 50),
        pipeline_ms_p95=percentile((t.pipeline_ms for t in per_turn), 95),
        session_id=session_id,
        events=dict(sorted(counts.items())),
        per_turn=list(per_turn),
        priced=_priced(price, raw, sum(raw_cached), managed, cached),
        timing=timing,
    )


def _check_inputs(
    per_turn: Sequence[ReplayTurn],
    window: int,
    usable: int,
    cache_read_price: float,
    raw_cached: Sequence[int],
) -> None:
    if not 0 < usable <= window:
        raise ValueError(f"usable window {usable} must be within 1..window ({window})")
    if not 0 <= cache_read_price <= 1:
        raise ValueError(f"cache_read_price {cache_read_price} must be a fraction in 0..1")
    if len(raw_cached) != len(per_turn):
        raise ValueError(f"raw_cached has {len(raw_cached)} values for {len(per_turn)} turns")
    for turn, prefix in zip(per_turn, raw_cached, strict=True):
        if not 0 <= prefix <= turn.raw_input_tokens:
            raise ValueError(
                f"turn {turn.step}: raw cached prefix {prefix} outside 0..rawInputTokens "
                f"({turn.raw_input_tokens})"
            )


def _priced(
    price: ModelPrice | None, raw: int, raw_cached: int, managed: int, cached: int
) -> PricedCost | None:
    if price is None:
        return None

    def usd(inputs: int, from_cache: int) -> float:
        uncached = (inputs - from_cache) * price.input_usd_per_mtok
        return (uncached + from_cache * price.cached_input_usd_per_mtok) / 1_000_000

    return PricedCost(
        model=price.model,
        raw_cost_usd=round(usd(raw, raw_cached), 6),
        managed_cost_usd=round(usd(managed, cached), 6),
    )


# --- HTML ------------------------------------------------------------------

WIDTH, HEIGHT = 960, 360
LEFT, RIGHT, TOP, BOTTOM = 80, 24, 16, 44
CSP = "default-src 'none'; style-src 'unsafe-inline'"
STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d2327;background:#fff}
h1{font-size:20px;margin:0 0 4px}
.sub{color:#646970;margin:0 0 16px}
svg{max-width:100%;height:auto;border:1px solid #dcdcde;border-radius:6px}
.grid{stroke:#eceef0}.axis{stroke:#8c8f94}.tick{fill:#50575e;font-size:11px}
.series{fill:none;stroke-width:2}.raw{stroke:#b32d2e}.managed{stroke:#2271b1}
.usable{stroke:#1d2327;stroke-dasharray:6 4}.window{stroke:#8c8f94;stroke-dasharray:2 3}
.cached{fill:#72aee6;fill-opacity:.35;stroke:none}
.event{fill:#dba617;stroke:#1d2327;stroke-width:1}
.rewrite{fill:#d63638;stroke:#1d2327;stroke-width:1}.rewrite-line{stroke:#d63638;stroke-opacity:.35}
.saved{fill:#d63638;font-size:10px}
.bar-raw{fill:#b32d2e}.bar-managed{fill:#2271b1}.bar-cached{fill:#72aee6}
.bar-label{fill:#1d2327;font-size:11px}
details.run{margin:12px 0}details.run>summary{cursor:pointer;font-weight:600}
.legend span{display:inline-block;margin-right:18px}
.sw{display:inline-block;width:18px;height:3px;vertical-align:middle;margin-right:6px}
.s-raw{background:#b32d2e}.s-managed{background:#2271b1}
.s-usable{border-top:2px dashed #1d2327;height:0}
.s-event{background:#dba617;width:10px;height:10px;border-radius:5px}
.s-rewrite{background:#d63638;width:10px;height:10px;border-radius:5px}
.s-cached{background:#72aee6;height:10px}.s-window{border-top:2px dotted #8c8f94;height:0}
table{border-collapse:collapse;margin-top:16px}
th,td{padding:4px 12px;border-bottom:1px solid #eceef0;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}
"""


LEGEND = (
    ("raw", "raw input"),
    ("managed", "managed input"),
    ("cached", "cached part of managed"),
    ("usable", "usable window"),
    ("window", "window"),
    ("rewrite", "rewrite (tooltip: what it saved)"),
    ("event", "other events"),
)


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _int(value: int) -> str:
    return f"{value:,}"


def _pct(value: float) -> str:
    return f"{value * 100:.1f}%"


def _nice_ceiling(value: float) -> float:
    """The smallest 1, 2, 4, 6 or 8 × 10^k at or above ``value`` (quarters stay round)."""
    if value <= 0:
        return 1.0
    scale = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 4, 6, 8, 10):
        if step * scale >= value:
            return float(step * scale)
    return float(10 * scale)


class _Frame:
    """Maps (turn index, tokens) to chart coordinates."""

    def __init__(self, count: int, top_value: float) -> None:
        self.count = count
        self.top = top_value
        self.width = WIDTH - LEFT - RIGHT
        self.height = HEIGHT - TOP - BOTTOM

    def x(self, index: int) -> float:
        if self.count <= 1:
            return LEFT + self.width / 2
        return LEFT + self.width * index / (self.count - 1)

    def y(self, value: float) -> float:
        return TOP + self.height * (1 - value / self.top)


def _text(x: float, y: float, label: str, anchor: str = "middle") -> str:
    return f'<text class="tick" x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}">{_e(label)}</text>'


def _hline(css: str, y: float, tip: str | None = None) -> str:
    title = f"<title>{_e(tip)}</title>" if tip else ""
    return (
        f'<line class="{css}" x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}">'
        f"{title}</line>"
    )


def _series(frame: _Frame, values: list[int], css: str, label: str) -> str:
    points = " ".join(f"{frame.x(i):.1f},{frame.y(v):.1f}" for i, v in enumerate(values))
    return (
        f'<polyline class="series {css}" data-series="{css}" points="{points}">'
        f"<title>{_e(label)}</title></polyline>"
    )


def _axes(frame: _Frame, report: ReplayReport) -> list[str]:
    parts: list[str] = []
    for k in range(5):
        value = frame.top * k / 4
        parts.append(_hline("grid", frame.y(value)))
        parts.append(_text(LEFT - 8, frame.y(value) + 4, _int(int(value)), "end"))
    base = HEIGHT - BOTTOM
    parts.append(_hline("axis", base))
    steps = [t.step for t in report.per_turn]
    for i in sorted({0, len(steps) // 2, len(steps) - 1}):
        parts.append(_text(frame.x(i), base + 16, str(steps[i])))
    parts.append(_text(LEFT + frame.width / 2, HEIGHT - 6, "turn"))
    return parts


def _is_rewrite(turn: ReplayTurn) -> bool:
    return any(event_kind(e) in REWRITE_KINDS for e in turn.events)


def _markers(frame: _Frame, report: ReplayReport) -> list[str]:
    """A marker at every turn with events; a rewrite is red, with a line down to the
    axis and what it saved written above it."""
    parts = []
    base = HEIGHT - BOTTOM
    for i, turn in enumerate(report.per_turn):
        if not turn.events:
            continue
        x, y = frame.x(i), frame.y(turn.managed_input_tokens)
        rewrite = _is_rewrite(turn)
        saved = f"; saved {_int(turn.saved_tokens)} tokens" if turn.saved_tokens else ""
        tip = f"turn {turn.step}: " + "; ".join(turn.events) + saved
        css = "rewrite" if rewrite else "event"
        if rewrite:
            parts.append(
                f'<line class="rewrite-line" x1="{x:.1f}" y1="{y:.1f}" x2="{x:.1f}" y2="{base}"/>'
            )
            if turn.saved_tokens:
                label = f"−{_short(turn.saved_tokens)}"
                parts.append(
                    f'<text class="saved" x="{x:.1f}" y="{y - 8:.1f}" '
                    f'text-anchor="middle">{_e(label)}</text>'
                )
        parts.append(
            f'<circle class="{css}" data-step="{turn.step}" cx="{x:.1f}" '
            f'cy="{y:.1f}" r="5"><title>{_e(tip)}</title></circle>'
        )
    return parts


def _short(tokens: int) -> str:
    return f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)


def _area(frame: _Frame, values: list[int], css: str, label: str) -> str:
    """A filled area from the axis up to ``values``."""
    base = frame.y(0)
    top = " ".join(f"{frame.x(i):.1f},{frame.y(v):.1f}" for i, v in enumerate(values))
    points = f"{frame.x(0):.1f},{base:.1f} {top} {frame.x(len(values) - 1):.1f},{base:.1f}"
    return (
        f'<polygon class="{css}" data-series="{css}" points="{points}">'
        f"<title>{_e(label)}</title></polygon>"
    )


def render_chart(report: ReplayReport) -> str:
    """Per call: raw and managed input tokens, the cached part of the managed
    request (filled), the usable window and the window (dashed), and a marker
    with a tooltip at every call that recorded events (rewrites in red, with
    what they saved)."""
    head = (
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        'aria-label="input tokens per model call">'
    )
    if not report.per_turn:
        return head + _text(WIDTH / 2, HEIGHT / 2, "no turns") + "</svg>"
    raw = [t.raw_input_tokens for t in report.per_turn]
    managed = [t.managed_input_tokens for t in report.per_turn]
    cached = [t.cached_input_tokens for t in report.per_turn]
    frame = _Frame(len(raw), _nice_ceiling(max(*raw, *managed, report.window)))
    body = [
        *_axes(frame, report),
        _area(frame, cached, "cached", "cached input tokens (cache-eligible prefix)"),
        _hline("window", frame.y(report.window), f"window {_int(report.window)}"),
        _hline(
            "usable", frame.y(report.usable_window), f"usable window {_int(report.usable_window)}"
        ),
        _series(frame, raw, "raw", "raw input tokens"),
        _series(frame, managed, "managed", "managed input tokens"),
        *_markers(frame, report),
    ]
    return head + "".join(body) + "</svg>"


def _summary_rows(report: ReplayReport) -> list[tuple[str, str]]:
    events = ", ".join(f"{kind} ×{count}" for kind, count in report.events.items()) or "none"
    rows = [
        ("Session", report.session_id or "(unnamed)"),
        ("Turns", _int(report.turns)),
        ("Raw input tokens", _int(report.raw_input_tokens)),
        ("Managed input tokens", _int(report.managed_input_tokens)),
        ("Cached input tokens", _int(report.cached_input_tokens)),
        ("Saved", _pct(report.saved_fraction)),
        ("Cache hit", _pct(report.cache_hit_fraction)),
        ("Cost ratio", f"{report.cost_ratio:.3f}"),
        ("Turns that fit", _pct(report.fit_fraction)),
        ("Rewrites", _int(report.rewrites)),
        ("Peak context tokens", _int(report.peak_context_tokens)),
        ("Window", _int(report.window)),
        ("Usable window", _int(report.usable_window)),
        ("Pipeline p50", f"{report.pipeline_ms_p50:.1f} ms"),
        ("Pipeline p95", f"{report.pipeline_ms_p95:.1f} ms"),
        ("Events", events),
    ]
    if report.priced is not None:
        p = report.priced
        rows.append(("Model", p.model))
        rows.append(("Raw cost", f"${p.raw_cost_usd:.4f}"))
        rows.append(("Managed cost", f"${p.managed_cost_usd:.4f}"))
    return rows


def _table(rows: list[tuple[str, str]]) -> str:
    body = "".join(
        f'<tr><th scope="row">{_e(k)}</th><td class="n">{_e(v)}</td></tr>' for k, v in rows
    )
    return f'<table class="summary">{body}</table>'


TURN_COLUMNS = ("turn", "raw", "managed", "cached", "fits", "raw fits", "saved", "ms", "events")


def _turn_row(t: ReplayTurn) -> str:
    cells = [
        (str(t.step), "n"),
        (_int(t.raw_input_tokens), "n"),
        (_int(t.managed_input_tokens), "n"),
        (_int(t.cached_input_tokens), "n"),
        ("yes" if t.fits else "no", ""),
        ("yes" if t.raw_fits else "no", ""),
        (_int(t.saved_tokens), "n"),
        (f"{t.pipeline_ms:.1f}", "n"),
        ("; ".join(t.events), ""),
    ]
    return "<tr>" + "".join(f'<td class="{c}">{_e(v)}</td>' for v, c in cells) + "</tr>"


def _turn_table(report: ReplayReport) -> str:
    head = "<tr>" + "".join(f"<th>{c}</th>" for c in TURN_COLUMNS) + "</tr>"
    rows = "".join(_turn_row(t) for t in report.per_turn)
    return (
        f'<details><summary>Per turn</summary><table class="turns">{head}{rows}</table></details>'
    )


def render_html(report: ReplayReport) -> str:
    """A self-contained page: inline CSS and SVG, no script, nothing fetched."""
    title = f"bonsai replay: {report.session_id or 'session'}"
    legend = '<p class="legend">' + "".join(
        f'<span><i class="sw s-{css}"></i>{label}</span>' for css, label in LEGEND
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{_e(title)}</h1>"
        f'<p class="sub">{_int(report.turns)} turns · saved {_pct(report.saved_fraction)} · '
        f"cost ratio {report.cost_ratio:.3f}</p>"
        f"{render_chart(report)}{legend}</p>{_table(_summary_rows(report))}{_turn_table(report)}"
        "</body></html>\n"
    )
