"""Per-model correction of estimated token counts against billed usage.

After each provider response the caller reports the *uncalibrated* estimate it
made for the request and the input tokens the provider billed. The factor is
an exponentially weighted geometric mean of billed/estimated ratios; each
ratio is clamped before it is averaged, so one odd response moves the factor
only a little. One sample is enough to apply the factor; from three on, a
calibrated estimate is trusted as ``high``.
"""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bonsai.services.fs.atomic import atomic_write
from bonsai.services.tokens.types import Confidence, Count


class CalibrationError(ValueError):
    """A saved calibration file cannot be read."""


class CalibrationConfig(BaseModel):
    """Tuning of the correction factor."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    alpha: float = Field(0.3, gt=0, le=1)  # weight of the newest ratio
    min_factor: float = Field(0.5, gt=0)
    max_factor: float = Field(2.0, gt=0)
    samples_to_apply: int = Field(1, ge=1)
    samples_for_high: int = Field(3, ge=1)


class ModelCalibration(BaseModel):
    """The learned state of one model."""

    model_config = ConfigDict(extra="forbid")

    factor: float = Field(1.0, gt=0)
    samples: int = Field(0, ge=0)
    last_estimated: int | None = None
    last_billed: int | None = None


class CalibrationState(BaseModel):
    """Everything a :class:`Calibrator` needs to survive a restart (saved as JSON)."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    models: dict[str, ModelCalibration] = Field(default_factory=dict)


class CalibrationSnapshot(BaseModel):
    """One model's calibration as the ledger shows it."""

    model_config = ConfigDict(frozen=True)

    model: str
    estimated: int | None
    billed: int | None
    factor: float
    samples: int
    confidence: Confidence


class Calibrator:
    """Learns and applies a per-model factor; safe to share between threads."""

    def __init__(
        self, state: CalibrationState | None = None, config: CalibrationConfig | None = None
    ) -> None:
        self._state = state.model_copy(deep=True) if state else CalibrationState()
        self._config = config or CalibrationConfig()
        self._lock = threading.Lock()

    def observe(self, model: str, estimated_input_tokens: int, billed_input_tokens: int) -> bool:
        """Record one response; returns False (and learns nothing) when the estimate was 0."""
        if estimated_input_tokens < 0 or billed_input_tokens < 0:
            raise ValueError(
                f"token counts must be >= 0, got estimated={estimated_input_tokens} "
                f"billed={billed_input_tokens}"
            )
        if estimated_input_tokens == 0 or billed_input_tokens == 0:
            return False
        ratio = self._clamp(billed_input_tokens / estimated_input_tokens)
        with self._lock:
            entry = self._state.models.setdefault(model, ModelCalibration())
            if entry.samples == 0:
                entry.factor = ratio
            else:
                a = self._config.alpha
                entry.factor = self._clamp(
                    math.exp((1 - a) * math.log(entry.factor) + a * math.log(ratio))
                )
            entry.samples += 1
            entry.last_estimated = estimated_input_tokens
            entry.last_billed = billed_input_tokens
        return True

    def apply(self, model: str, estimate: int) -> Count:
        """``estimate`` corrected by ``model``'s factor, tagged ``low`` or ``high``."""
        if estimate < 0:
            raise ValueError(f"estimate must be >= 0, got {estimate}")
        factor, samples = self._factor_and_samples(model)
        confidence = self._confidence(samples)
        if samples < self._config.samples_to_apply:
            return Count(tokens=estimate, confidence=confidence)
        return Count(tokens=round(estimate * factor), confidence=confidence, raw_tokens=estimate)

    def snapshot(self, model: str) -> CalibrationSnapshot:
        with self._lock:
            entry = self._state.models.get(model) or ModelCalibration()
            return CalibrationSnapshot(
                model=model,
                estimated=entry.last_estimated,
                billed=entry.last_billed,
                factor=entry.factor,
                samples=entry.samples,
                confidence=self._confidence(entry.samples),
            )

    def state(self) -> CalibrationState:
        """A copy of the learned state, models in name order."""
        with self._lock:
            models = {k: self._state.models[k].model_copy() for k in sorted(self._state.models)}
        return CalibrationState(models=models)

    def adopt(self, state: CalibrationState) -> None:
        """Take ``state`` as the learned state (another process's calibrator, copied)."""
        with self._lock:
            self._state = state.model_copy(deep=True)

    def save(self, path: Path) -> None:
        """Write the state to ``path`` as JSON, atomically."""
        atomic_write(path, (self.state().model_dump_json(indent=2) + "\n").encode())

    @classmethod
    def load(cls, path: Path, config: CalibrationConfig | None = None) -> Calibrator:
        """A calibrator from ``path``; a fresh one when the file does not exist yet."""
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls(config=config)
        except OSError as exc:
            raise CalibrationError(f"cannot read calibration file {path}: {exc}") from exc
        try:
            state = CalibrationState.model_validate_json(text)
        except ValidationError as exc:
            raise CalibrationError(f"calibration file {path} is invalid: {exc}") from exc
        return cls(state, config)

    def _factor_and_samples(self, model: str) -> tuple[float, int]:
        with self._lock:
            entry = self._state.models.get(model)
            return (entry.factor, entry.samples) if entry else (1.0, 0)

    def _confidence(self, samples: int) -> Confidence:
        return "high" if samples >= self._config.samples_for_high else "low"

    def _clamp(self, value: float) -> float:
        return min(self._config.max_factor, max(self._config.min_factor, value))
