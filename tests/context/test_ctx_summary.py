"""The deterministic structured summary and the background-summary logic."""

from __future__ import annotations

from ctx_helpers import items_of, step, user

from bonsai.core.context import (
    HEADINGS,
    BackgroundSummary,
    background_action,
    freshness,
    parse_sections,
    ready_summary,
    update_summary,
)
from bonsai.core.context.groups import call_names
from bonsai.domain import Message
from bonsai.settings import ContextSettings

SPAN = items_of(
    [
        user("Rename `load_cfg()` to `load_config()`. You must not touch tests/fixtures."),
        Message(
            role="assistant",
            content="I will grep for callers first. Then edit.",
            tool_calls=step(0, "")[0].tool_calls,
        ),
        step(0, "src/app.py:12: load_cfg()\nsrc/cli.py:40: load_cfg()", name="bash")[1],
        *step(1, "def load_cfg():\n    ...", path="src/config.py", lines=(1, 20)),
        *step(
            2,
            "Traceback (most recent call last):\nKeyError: 'path'",
            name="bash",
            ok=False,
            path="src/x.py",
            kind="edit",
        ),
    ]
)


def _summary(previous: str | None = None, span=SPAN, limit: int = 10_000) -> str:  # type: ignore[no-untyped-def]
    return update_summary(
        previous,
        span,
        call_names(SPAN),
        goal="Rename it",
        task=SPAN[0].message.content,
        max_chars=limit,
    )


def test_the_headings_are_fixed_and_in_order() -> None:
    text = _summary()
    assert [ln[3:] for ln in text.splitlines() if ln.startswith("## ")] == list(HEADINGS)
    assert parse_sections(text)["Open tasks"] == ["I will grep for callers first. Then edit."]


def test_identifiers_are_quoted_verbatim() -> None:
    text = _summary()
    assert "`src/config.py` (read)" in text
    assert "read_file `src/config.py` lines 1-20 → read, 2 lines" in text
    assert "You must not touch tests/fixtures." in parse_sections(text)["Constraints"]
    assert any("KeyError: 'path'" in r for r in parse_sections(text)["Risks"])
    assert "task: Rename `load_cfg()` to `load_config()`." in text


def test_an_update_keeps_the_previous_entries_and_adds_the_new_span() -> None:
    previous = "## Decisions\n- keep `legacy_api` stable\n\n## Files touched\n- `old.py` (read)"
    text = _summary(previous, SPAN[3:5])
    sections = parse_sections(text)
    assert sections["Decisions"][0] == "keep `legacy_api` stable"
    assert sections["Files touched"] == ["`old.py` (read)", "`src/config.py` (read)"]


def test_a_summary_is_cut_to_its_budget_dropping_old_entries_first() -> None:
    long = "## Tool findings\n" + "\n".join(f"- finding {n} " + "x" * 50 for n in range(40))
    text = _summary(long, limit=1_500)
    assert len(text) <= 1_500
    findings = parse_sections(text)["Tool findings"]
    assert "finding 0 " not in " ".join(findings)
    assert findings[-1].startswith("bash `src/x.py` → failed: Traceback")


def test_background_summaries_start_at_the_soft_fraction_and_wait_at_the_hard_one() -> None:
    on = ContextSettings(background_summary=True, soft_fraction=0.8, compact_trigger=0.95)
    assert background_action(700, 1_000, on, running=False, summary=None) == "none"
    assert background_action(850, 1_000, on, running=False, summary=None) == "start"
    assert background_action(850, 1_000, on, running=True, summary=None) == "none"
    assert background_action(960, 1_000, on, running=True, summary=None) == "wait"
    assert background_action(960, 1_000, ContextSettings(), running=True, summary=None) == "none"


def test_a_stale_background_summary_is_extended_before_use() -> None:
    old = BackgroundSummary(text="## Decisions\n- use `tomllib`", through_seq=3, mode="provider")
    assert freshness(None, 5) == "none"
    assert freshness(old, 3) == "use"
    assert freshness(old, 7) == "extend"
    fold = [i.id for i in SPAN]
    text = ready_summary(old, SPAN, fold, call_names(SPAN), goal="g", max_chars=10_000)
    assert "use `tomllib`" in text and "`src/config.py` (read)" in text  # seq 4-5 added
    assert "src/app.py:12" not in text  # seq 3 was already covered: not read again
    assert (
        ready_summary(old, SPAN, fold[:3], call_names(SPAN), goal="g", max_chars=10_000) == old.text
    )
