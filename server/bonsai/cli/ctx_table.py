"""The /ctx ledger as an aligned terminal table with a fill bar."""

from __future__ import annotations

from typing import Any

from bonsai.cli.terminal_text import shown

STATE_MARK = {
    "full": " ",
    "pinned": "P",
    "stubbed": "S",
    "dropped": "D",
    "summarized": "Σ",
    "archived": "A",
}


def fill_bar(percent: float, width: int = 30) -> str:
    filled = max(0, min(width, round(width * percent / 100)))
    return "█" * filled + "░" * (width - filled)


def _billed(totals: dict[str, Any]) -> str:
    if not totals.get("billedReported", True):
        return "billed input not reported by the server"
    return f"billed input {totals['billedInput']:,}, cached {totals['cachedInput']:,}"


def _totals(totals: dict[str, Any]) -> list[str]:
    factor = float(totals.get("calibrationFactor", 1) or 1)
    lines = [
        f"context  {fill_bar(totals['percent'])} {totals['percent']:5.1f}%  "
        f"{totals['used']:,} / {totals['usable']:,} usable tokens "
        f"(window {totals['window']:,}, reserve {totals['reserve']:,}; "
        f"{totals.get('confidence', 'low')} confidence)",
    ]
    if totals.get("windowSource"):
        lines.append(f"window from {totals['windowSource']}")
    lines.append(f"last request: estimated {totals.get('estimatedInput', 0):,}, {_billed(totals)}")
    if factor > 1.005:
        lines.append(
            f"usable = (window − reserve) ÷ {factor:.2f}: the provider bills "
            f"{(factor - 1) * 100:.0f}% more input than bonsai estimates, so decisions are made "
            "on a budget that holds against the bill"
        )
    lines.extend(f"note: {note}" for note in totals.get("windowNotes") or [])
    return lines


def _label(node: dict[str, Any]) -> str:
    return shown(str(node["label"]), newlines=False)[:48]


def ledger_lines(result: dict[str, Any], limit: int | None = None) -> list[str]:
    lines = _totals(result["totals"]) if result.get("totals") else []
    nodes = result.get("nodes") or []
    rows = sorted(nodes, key=lambda n: -n["tokens"])[:limit] if limit else nodes
    if rows:
        width = max(len(_label(n)) for n in rows)
        lines.append("")
        lines.append(f"  {'node':<{width}}  {'tokens':>8}  state  section   reason")
        for node in rows:
            mark = STATE_MARK.get(node["state"], "?")
            reason = shown(str(node.get("reason", "")), newlines=False)
            lines.append(
                f"{mark} {_label(node):<{width}}  {node['tokens']:>8,}  {node['state']:<6} "
                f"{node['section']:<9} {reason}"
            )
        if limit and len(nodes) > limit:
            lines.append(f"  … {len(nodes) - limit} more nodes (bonsai ctx shows all)")
    for turn in result.get("turns") or []:
        events = ", ".join(e["kind"] for e in turn.get("events", [])) or "-"
        lines.append(
            f"turn {turn['turn']:>3}: input {turn['inputTokens']:>7,}  cached "
            f"{turn['cachedTokens']:>7,}  output {turn['outputTokens']:>6,}  "
            f"estimated {turn['estimatedTokens']:>7,}  events: {events}"
        )
    return lines


def print_ledger(result: dict[str, Any], limit: int | None = None) -> None:
    print("\n".join(ledger_lines(result, limit)))
