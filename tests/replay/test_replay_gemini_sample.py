"""A sample of the real mini-swe-agent corpus replayed at a 32,000 window: every
call fits, the pipeline saves, and recorded outputs over the cut are cut (the
whole corpus, per preset, is ``bench/replay_corpus.py``).

Read in place from ``../shared/corpus/mini-swe-agent-gemini`` (or
``$BONSAI_CORPUS``); skipped with the reason when absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bonsai.services.importers import import_file
from bonsai.services.replay.corpus import ConfigSpec, replay_corpus, total_of
from bonsai.services.replay.runner import executed
from bonsai.services.replay.source import source_from_messages
from bonsai.settings import ToolOutputSettings

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(
    os.environ.get("BONSAI_CORPUS", ROOT.parent / "shared" / "corpus" / "mini-swe-agent-gemini")
)
SAMPLE = 3
LONG_OUTPUT = "pylint-dev__pylint-6528.traj.json"  # the file with outputs over 24,000 chars


def _sample() -> list[Path]:
    files = sorted(CORPUS.glob("*.traj.json")) if CORPUS.is_dir() else []
    if not files:
        pytest.skip(f"no mini-swe-agent corpus at {CORPUS} (set BONSAI_CORPUS)")
    step = max(1, len(files) // SAMPLE)
    sample = files[::step][:SAMPLE]
    return sample + [p for p in files if p.name == LONG_OUTPUT and p not in sample]


def test_a_sample_fits_32k_saves_and_cuts_what_a_live_tool_would() -> None:
    files = _sample()
    spec = ConfigSpec(model="gpt-4o", window=32_000, preset="save")
    results = replay_corpus(files, spec, jobs=1)
    runs = [r for f in results for r in f.runs]
    assert [f.error for f in results] == [None] * len(files)
    assert len(runs) == len(files)
    total = total_of(runs)
    assert total.fit() == 1.0
    assert total.managed < 0.6 * total.raw
    assert all(not r.title.startswith("<") for r in runs)
    settings = ToolOutputSettings()
    cuts = 0
    for path in files:
        source = source_from_messages(import_file(path).messages)
        cut = executed(source, settings)
        for before, after in zip(source.items, cut.items, strict=True):
            if before.message.role == "tool" and len(before.message.content) > settings.max_chars:
                assert "read_tool_output(" in after.message.content
                assert len(after.message.content) < len(before.message.content)
                cuts += 1
            else:
                assert after.message == before.message
    assert (cuts > 0) == any(p.name == LONG_OUTPUT for p in files)
