"""Replay invariants on the real recorded sessions (skipped when the corpus is absent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bonsai.core.replay.report import REWRITE_KINDS
from bonsai.services.importers import import_file
from bonsai.services.replay import build_config, replay, replay_steps, source_from_messages
from bonsai.services.replay.corpus import Tally, recordings, replay_recording

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("BONSAI_TRAJECTORIES", ROOT.parent / "shared" / "trajectories"))


def _cases() -> list[object]:
    if not CORPUS.is_dir():
        reason = f"no recorded sessions at {CORPUS} (set BONSAI_TRAJECTORIES)"
        return [pytest.param(None, 0, marks=pytest.mark.skip(reason=reason))]
    paths = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".traj", ".jsonl"))
    return [
        pytest.param(p, run, id=f"{p.name}#{run}")
        for p in paths
        for run in range(import_file(p).runs)
    ]


@pytest.mark.parametrize(("path", "run"), _cases())
def test_recorded_sessions_fit_32k_and_never_grow(path: Path, run: int) -> None:
    session = import_file(path, run=run)
    source = source_from_messages(session.messages)
    rows = replay_steps(source, build_config(window=32_000))
    assert all(r.turn.fits for r in rows)
    assert all(r.turn.managed_input_tokens <= r.turn.raw_input_tokens for r in rows)
    for row in rows:
        messages = row.assembly.messages
        calls = {c.id for m in messages for c in m.tool_calls}
        assert calls == {m.tool_call_id for m in messages if m.role == "tool"}


def test_the_corpus_saves_tokens_at_32k() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"no recorded sessions at {CORPUS}")
    raw = managed = 0
    config = build_config(window=32_000)
    for path in sorted(p for p in CORPUS.rglob("*") if p.suffix in (".traj", ".jsonl")):
        for run in range(import_file(path).runs):
            report = replay(source_from_messages(import_file(path, run=run).messages), config)
            raw += report.raw_input_tokens
            managed += report.managed_input_tokens
    assert managed < 0.75 * raw


def test_the_save_preset_meets_the_cascade_aims_at_32k() -> None:
    """Issue 6's aims over the whole corpus: every call fits, managed input at most
    45% of raw, at least 83% of it a cache-eligible prefix, cost at most 0.70."""
    if not CORPUS.is_dir():
        pytest.skip(f"no recorded sessions at {CORPUS}")
    config = build_config(window=32_000, preset="save")
    tally = Tally()
    for _, path, run in recordings(CORPUS):
        tally.add(replay_recording(path, run, config), REWRITE_KINDS)
    assert tally.fit() == 1.0
    assert tally.managed <= 0.45 * tally.raw
    assert tally.hit() >= 0.83
    assert tally.cost_ratio(0.1) <= 0.70
