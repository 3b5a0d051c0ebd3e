"""Result types shared by every token estimator: counts, confidence, errors.

A :class:`Count` is what callers see. ``confidence`` says how far a budget
decision may trust it: ``exact`` comes from the provider's own tokenizer or
API, ``high`` from a documented approximation or a well-calibrated estimate,
``low`` from a heuristic that has not been checked against real usage yet.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

Confidence = Literal["exact", "high", "low"]
Family = Literal["openai", "anthropic", "deepseek", "qwen", "other"]

_RANK: dict[Confidence, int] = {"low": 0, "high": 1, "exact": 2}


def min_confidence(*levels: Confidence) -> Confidence:
    """The weakest of ``levels`` (``exact`` when none are given)."""
    if not levels:
        return "exact"
    return min(levels, key=_RANK.__getitem__)


def at_most(level: Confidence, cap: Confidence) -> Confidence:
    """``level`` lowered to ``cap`` when it is stronger than ``cap``."""
    return min_confidence(level, cap)


class Count(BaseModel):
    """A token count with its confidence.

    ``image_tokens`` is the part of ``tokens`` that stands for image payloads.
    ``raw_tokens`` is the count before calibration (``None`` when no
    calibration factor was applied); feed it, not ``tokens``, back to
    :meth:`Calibrator.observe` so the factor does not compound.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    tokens: int = Field(ge=0)
    confidence: Confidence
    image_tokens: int = Field(default=0, ge=0)
    raw_tokens: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _images_within_total(self) -> Count:
        if self.image_tokens > self.tokens:
            raise ValueError(f"image_tokens ({self.image_tokens}) exceed tokens ({self.tokens})")
        return self

    @property
    def uncalibrated(self) -> int:
        """The count before any calibration factor."""
        return self.tokens if self.raw_tokens is None else self.raw_tokens

    def __add__(self, other: Count) -> Count:
        return combine((self, other))


def combine(counts: Iterable[Count]) -> Count:
    """Sum of ``counts``; the confidence is the weakest part's."""
    tokens = images = raw = 0
    levels: list[Confidence] = []
    calibrated = False
    for count in counts:
        tokens += count.tokens
        images += count.image_tokens
        raw += count.uncalibrated
        calibrated = calibrated or count.raw_tokens is not None
        levels.append(count.confidence)
    return Count(
        tokens=tokens,
        confidence=min_confidence(*levels),
        image_tokens=images,
        raw_tokens=raw if calibrated else None,
    )


class Estimator(Protocol):
    """Counts the tokens of plain text for one tokenizer or heuristic."""

    @property
    def name(self) -> str: ...

    @property
    def confidence(self) -> Confidence: ...

    def count_text(self, text: str) -> int: ...


class TokenizerUnavailable(RuntimeError):
    """A tokenizer (rank file, tokenizer.json) cannot be found or loaded."""


class RankFileError(TokenizerUnavailable):
    """A tiktoken rank file exists but is not the file tiktoken expects."""
