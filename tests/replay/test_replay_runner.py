"""Replay invariants on a recording of our own: importer → pipeline → report."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from replay_helpers import write_recording

from bonsai.core.context import system_text
from bonsai.core.replay.report import report_json
from bonsai.services.replay import build_config, file_source, replay, replay_steps
from bonsai.settings import ContextSettings

SMALL = ContextSettings(output_reserve=4_000)  # window 8,000 → usable 4,000


@pytest.fixture
def recording(tmp_path: Path) -> Path:
    return write_recording(tmp_path)


def _steps(path: Path, policy: str = "managed", window: int = 8_000):  # type: ignore[no-untyped-def]
    source, _ = file_source(path)
    return source, replay_steps(source, build_config(window=window, settings=SMALL, policy=policy))  # type: ignore[arg-type]


def test_managed_never_exceeds_raw_and_every_call_fits(recording: Path) -> None:
    _, rows = _steps(recording)
    assert len(rows) == 12
    assert all(r.turn.managed_input_tokens <= r.turn.raw_input_tokens for r in rows)
    assert all(r.turn.fits for r in rows)
    assert not all(r.turn.raw_fits for r in rows)  # the raw history would overflow
    kinds = {e.split(":")[0] for r in rows for e in r.turn.events}
    assert {"reuse", "stub", "fold", "compaction"} <= kinds
    assert any("deterministic fallback" in e for r in rows for e in r.turn.events)


def test_everything_disabled_reproduces_raw_exactly(recording: Path) -> None:
    source, rows = _steps(recording, policy="none")
    persona = source.persona
    assert persona is not None
    for pos, row in zip(source.steps, rows, strict=True):
        history = [i.message for i in source.items[:pos]]
        assert row.assembly.messages == history
        assert system_text(row.assembly.system) == persona.text
        assert row.turn.managed_input_tokens == row.turn.raw_input_tokens
        assert row.turn.cached_input_tokens == row.raw_cached
        assert row.turn.events == []


def test_two_runs_give_identical_numbers(recording: Path) -> None:
    source, _ = file_source(recording)
    config = build_config(window=8_000, settings=SMALL)
    first, second = (
        replay(source, config),
        replay(source, build_config(window=8_000, settings=SMALL)),
    )

    def numbers(report):  # type: ignore[no-untyped-def]
        data = report.model_dump(by_alias=True, exclude={"pipeline_ms_p50", "pipeline_ms_p95"})
        for turn in data["perTurn"]:
            turn.pop("pipelineMs")
        return data

    assert numbers(first) == numbers(second)
    assert '"costRatio"' in report_json(first)


def test_the_managed_prefix_survives_between_rewrites(recording: Path) -> None:
    _, rows = _steps(recording, window=40_000)
    for before, row in itertools.pairwise(rows):
        if before.turn.managed_input_tokens >= 1_152 and not row.turn.events:
            # append-only: all of the previous request is cached, down to a 128-token step
            assert before.turn.managed_input_tokens - row.turn.cached_input_tokens < 128


def test_repeated_unchanged_reads_are_sent_as_pointers(recording: Path) -> None:
    _, rows = _steps(recording, window=40_000)
    reuse = next(r for r in rows if any(e.startswith("reuse") for e in r.turn.events))
    pointer = next(
        m for m in reuse.assembly.messages if m.content.startswith("[reused previous read: ")
    )
    assert pointer.evidence is not None and pointer.evidence.path == "src/mod1.py"
    assert reuse.turn.managed_input_tokens < reuse.turn.raw_input_tokens


def test_the_naive_baseline_summarises_everything_at_95_percent(recording: Path) -> None:
    _, rows = _steps(recording, policy="naive")
    folds = [r for r in rows if any(e.startswith("fold") for e in r.turn.events)]
    assert folds
    first = folds[0].assembly.messages
    assert first[0].content.startswith("[bonsai summary of earlier messages")  # task folded too
    assert first[0].content.splitlines()[-1].startswith("[summary revision 1, ")
    assert "## Current goal\n- Find why f3_7 returns the wrong value" in first[0].content
    assert sum(1 for m in first if m.role == "assistant") == 1  # only the latest step stays
    assert all(r.turn.fits for r in rows)


def test_a_session_with_no_assistant_message_has_no_turns(tmp_path: Path) -> None:
    path = tmp_path / "empty.json"
    path.write_text('[{"role": "user", "content": "hello"}]')
    source, _ = file_source(path)
    report = replay(source, build_config(window=8_000, settings=SMALL))
    assert report.turns == 0 and report.fit_fraction == 1.0


def test_a_window_smaller_than_the_reserve_is_refused() -> None:
    with pytest.raises(ValueError, match="is not larger than the output reserve"):
        build_config(window=3_000, settings=SMALL)
