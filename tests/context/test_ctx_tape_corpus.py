"""The tape on recorded sessions: every model call of a sample of both corpora
(every 12th recording, W = 32k, the default preset, episodes on) assembles
exactly as it does without any memo, while it stubs, compacts and folds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from ctx_helpers import char_counter

from bonsai.core.context import AssembleInput, AssemblyMemo, Budget, ContextState, assemble
from bonsai.core.context.presets import effective_context
from bonsai.services.replay.corpus import load_sources
from bonsai.settings import ContextSettings, EpisodeSettings

ROOT = Path(__file__).resolve().parents[2]
QUICK = Path(os.environ.get("BONSAI_TRAJECTORIES", ROOT.parent / "shared" / "trajectories"))
LARGE = Path(
    os.environ.get("BONSAI_CORPUS", ROOT.parent / "shared" / "corpus" / "mini-swe-agent-gemini")
)

pytestmark = pytest.mark.skipif(
    not (QUICK.is_dir() and LARGE.is_dir()),
    reason=f"needs both corpora: {QUICK} and {LARGE} (set BONSAI_TRAJECTORIES, BONSAI_CORPUS)",
)


def test_every_recorded_call_assembles_as_without_the_tape() -> None:
    counter = char_counter()
    settings = effective_context(ContextSettings())
    kinds: set[str] = set()
    calls = 0
    for source in load_sources([QUICK, LARGE], 12):
        memo, state = AssemblyMemo(), ContextState()
        parts = [source.persona] if source.persona else []
        for pos in source.steps:
            inp = AssembleInput(
                parts=parts,
                tools=[],
                items=source.items[:pos],
                state=state,
                budget=Budget(window=32_000, reserve=16_000),
                settings=settings,
                family="openai",
                counter=counter,
                turn=1,
                episodes=EpisodeSettings(),
            )
            plain = assemble(inp)
            taped = assemble(inp.model_copy(update={"memo": memo}))
            assert taped == plain, f"{source.title}: call at message {pos}"
            kinds.update(r.kind for r in taped.records)
            state = taped.state
            calls += 1
    assert calls > 100
    assert {"stub", "fold"} <= kinds  # the stages rewrote along the way
