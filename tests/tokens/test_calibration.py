"""Calibration: convergence toward billed usage, clamping, confidence, persistence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bonsai.domain import Message
from bonsai.services.tokens import CalibrationError, Calibrator, estimator_for
from bonsai.settings import ModelInfo


def test_factor_converges_to_the_billed_ratio() -> None:
    calibrator = Calibrator()
    errors = []
    for i in range(12):
        estimate = 1_000 + 250 * (i % 4)
        billed = round(estimate * 1.25)
        errors.append(abs(calibrator.apply("m", estimate).tokens - billed) / billed)
        calibrator.observe("m", estimate, billed)
    assert errors[0] == pytest.approx(0.2)  # uncalibrated: off by the whole ratio
    assert errors[-1] < 0.01
    assert calibrator.snapshot("m").factor == pytest.approx(1.25, rel=1e-3)


def test_one_sample_applies_and_three_upgrade_to_high() -> None:
    calibrator = Calibrator()
    assert calibrator.apply("m", 100).model_dump() == {
        "tokens": 100,
        "confidence": "low",
        "image_tokens": 0,
        "raw_tokens": None,
    }
    calibrator.observe("m", 100, 150)
    first = calibrator.apply("m", 100)
    assert (first.tokens, first.confidence, first.raw_tokens) == (150, "low", 100)
    calibrator.observe("m", 100, 150)
    assert calibrator.apply("m", 100).confidence == "low"
    calibrator.observe("m", 100, 150)
    assert calibrator.apply("m", 100).confidence == "high"
    assert calibrator.apply("other-model", 100).tokens == 100


def test_outliers_are_clamped_and_move_the_factor_only_a_little() -> None:
    calibrator = Calibrator()
    calibrator.observe("m", 100, 10_000)
    assert calibrator.snapshot("m").factor == 2.0
    steady = Calibrator()
    for _ in range(5):
        steady.observe("m", 1_000, 1_100)
    steady.observe("m", 1_000, 50)  # one broken response
    assert 0.8 < steady.snapshot("m").factor < 1.1


def test_bad_observations() -> None:
    calibrator = Calibrator()
    with pytest.raises(ValueError, match="token counts must be >= 0"):
        calibrator.observe("m", -1, 10)
    assert calibrator.observe("m", 0, 10) is False
    assert calibrator.snapshot("m").samples == 0


def test_state_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "state" / "calibration.json"
    calibrator = Calibrator()
    for _ in range(3):
        calibrator.observe("claude-x", 1_000, 1_300)
    calibrator.observe("deepseek-chat", 2_000, 1_800)
    calibrator.save(path)
    restored = Calibrator.load(path)
    assert restored.snapshot("claude-x") == calibrator.snapshot("claude-x")
    assert restored.apply("claude-x", 1_000) == calibrator.apply("claude-x", 1_000)
    assert list(json.loads(path.read_text())["models"]) == ["claude-x", "deepseek-chat"]
    snapshot = restored.snapshot("claude-x")
    assert (snapshot.estimated, snapshot.billed, snapshot.samples) == (1_000, 1_300, 3)


def test_missing_file_starts_fresh_and_corrupt_file_is_a_clear_error(tmp_path: Path) -> None:
    assert Calibrator.load(tmp_path / "absent.json").snapshot("m").samples == 0
    corrupt = tmp_path / "calibration.json"
    corrupt.write_text('{"version": 1, "models": {"m": {"factor": -3}}}')
    with pytest.raises(CalibrationError, match=str(corrupt)):
        Calibrator.load(corrupt)


def test_counter_calibrates_from_usage_without_compounding() -> None:
    calibrator = Calibrator()
    counter = estimator_for(
        ModelInfo(family="other"),
        cache_dir=Path("/nonexistent"),
        tokenizer_path=None,
        model="local-llm",
        calibrator=calibrator,
    )
    messages = [Message(role="user", content="word " * 400)]
    first = counter.count_request(messages)
    assert first.confidence == "low"
    uncalibrated = first.tokens
    billed = round(uncalibrated * 1.3)
    for _ in range(10):  # the caller always passes what the counter just returned
        assert counter.observe_usage(counter.count_request(messages), billed)
    final = counter.count_request(messages)
    assert final.confidence == "high"  # three or more samples upgrade the chars/4 guess
    assert abs(final.tokens - billed) <= 2
    assert final.uncalibrated == uncalibrated
    assert counter.calibration() is not None
    assert counter.calibration().factor == pytest.approx(1.3, rel=0.01)  # type: ignore[union-attr]
