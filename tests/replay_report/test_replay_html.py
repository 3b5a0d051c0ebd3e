"""render_html(): a self-contained page with the chart and the summary table."""

from __future__ import annotations

import re

from bonsai.core.replay.report import ModelPrice, ReplayTurn, render_html, summarize


def _turns() -> list[ReplayTurn]:
    rows = [
        (0, 2_000, 2_000, 0, []),
        (1, 9_000, 6_000, 2_000, ["stub: 3 reads <old>"]),
        (2, 12_000, 7_000, 6_000, ["reuse: m4 answered with a pointer"]),
        (3, 15_000, 7_500, 6_000, []),
        (4, 22_000, 5_000, 4_000, ["compaction: tier 1", 'archive: #2 "setup"']),
    ]
    saved = {1: 3_000, 4: 12_500}
    return [
        ReplayTurn(
            step=s,
            raw_input_tokens=r,
            managed_input_tokens=m,
            cached_input_tokens=c,
            fits=True,
            raw_fits=r <= 16_000,
            events=e,
            pipeline_ms=3.5,
            saved_tokens=saved.get(s, 0),
        )
        for s, r, m, c, e in rows
    ]


def _page() -> str:
    report = summarize(
        _turns(),
        window=32_000,
        usable=16_000,
        cache_read_price=0.1,
        raw_cached=[0, 1_000, 4_000, 8_000, 14_000],
        session_id="demo <session>",
        price=ModelPrice(model="gpt-4o", input_usd_per_mtok=2.5, cached_input_usd_per_mtok=1.25),
    )
    return render_html(report)


def test_page_fetches_nothing_and_runs_no_script() -> None:
    page = _page()
    assert "http://" not in page and "https://" not in page
    assert "<script" not in page
    assert not re.search(r"\b(src|href)\s*=", page)
    assert "Content-Security-Policy" in page
    assert page.startswith("<!DOCTYPE html>")


def test_chart_has_both_series_with_a_point_per_turn_and_the_usable_line() -> None:
    page = _page()
    for series in ("raw", "managed"):
        match = re.search(rf'<polyline class="series {series}"[^>]*points="([^"]+)"', page)
        assert match is not None, series
        assert len(match.group(1).split()) == 5
    assert '<line class="usable"' in page
    assert "usable window 16,000" in page


def test_a_marker_with_a_tooltip_for_each_turn_with_events_rewrites_saying_what_they_saved() -> (
    None
):
    page = _page()
    rewrites = re.findall(r'<circle class="rewrite" data-step="(\d+)"', page)
    others = re.findall(r'<circle class="event" data-step="(\d+)"', page)
    assert (rewrites, others) == (["1", "4"], ["2"])
    assert "<title>turn 1: stub: 3 reads &lt;old&gt;; saved 3,000 tokens</title>" in page
    assert "turn 4: compaction: tier 1; archive: #2 &quot;setup&quot;; saved 12,500 tokens" in page
    assert ">−12.5k</text>" in page and ">−3.0k</text>" in page
    assert "<title>turn 2: reuse: m4 answered with a pointer</title>" in page


def test_the_cached_part_and_the_window_are_drawn() -> None:
    page = _page()
    cached = re.search(r'<polygon class="cached"[^>]*points="([^"]+)"', page)
    assert cached is not None and len(cached.group(1).split()) == 5 + 2  # closed to the axis
    assert '<line class="window"' in page and "window 32,000" in page


def test_managed_series_sits_lower_than_raw_where_it_saved_tokens() -> None:
    page = _page()
    raw = re.search(r'class="series raw"[^>]*points="([^"]+)"', page)
    managed = re.search(r'class="series managed"[^>]*points="([^"]+)"', page)
    assert raw is not None and managed is not None
    raw_y = [float(p.split(",")[1]) for p in raw.group(1).split()]
    managed_y = [float(p.split(",")[1]) for p in managed.group(1).split()]
    assert raw_y[0] == managed_y[0]
    assert all(m > r for m, r in zip(managed_y[1:], raw_y[1:], strict=True))  # SVG y grows down


def test_summary_table_shows_the_figures() -> None:
    page = _page()
    table = page[page.index('<table class="summary">') :]
    for label, value in [
        ("Session", "demo &lt;session&gt;"),
        ("Turns", "5"),
        ("Raw input tokens", "60,000"),
        ("Managed input tokens", "27,500"),
        ("Cached input tokens", "18,000"),
        ("Saved", "54.2%"),
        ("Turns that fit", "100.0%"),
        ("Rewrites", "2"),
        ("Peak context tokens", "7,500"),
        ("Usable window", "16,000"),
        ("Events", "archive ×1, compaction ×1, reuse ×1, stub ×1"),
        ("Model", "gpt-4o"),
    ]:
        assert f'<th scope="row">{label}</th><td class="n">{value}</td>' in table, label


def test_rendering_is_deterministic_and_handles_no_turns() -> None:
    assert _page() == _page()
    empty = summarize([], window=10, usable=8, cache_read_price=0.1, raw_cached=[])
    page = render_html(empty)
    assert "no turns" in page
    assert "<polyline" not in page
