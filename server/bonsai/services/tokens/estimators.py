"""Text estimators: tiktoken encodings, Hugging Face tokenizers, character ratios.

Each one satisfies :class:`bonsai.services.tokens.types.Estimator`. They count
plain text only; message framing, images and calibration are added by
:class:`bonsai.services.tokens.counter.TokenCounter`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bonsai.services.tokens.types import Confidence

if TYPE_CHECKING:  # the libraries load with a tokenizer (offline_tiktoken, hf_tokenizer)
    import tiktoken
    import tokenizers

# Characters per token of the heuristics. 4 is the classic rule of thumb for
# English prose; code-heavy agent transcripts measured 3.4-3.5 (see
# docs/tokens.md and bench/token_counting.py), so the provider-specific
# estimates start there and calibration corrects the rest.
FALLBACK_CHARS_PER_TOKEN = 4.0
ANTHROPIC_CHARS_PER_TOKEN = 3.5
OPEN_WEIGHTS_CHARS_PER_TOKEN = 3.4


@dataclass(frozen=True)
class TiktokenEstimator:
    """Exact counts from a tiktoken encoding (special tokens count as text)."""

    encoding: tiktoken.Encoding

    @property
    def name(self) -> str:
        return f"tiktoken:{self.encoding.name}"

    @property
    def confidence(self) -> Confidence:
        return "exact"

    def count_text(self, text: str) -> int:
        return len(self.encoding.encode_ordinary(text))


@dataclass(frozen=True)
class HFTokenizerEstimator:
    """Exact counts from a Hugging Face ``tokenizer.json`` (no special tokens added)."""

    tokenizer: tokenizers.Tokenizer
    path: Path

    @property
    def name(self) -> str:
        return f"tokenizers:{self.path}"

    @property
    def confidence(self) -> Confidence:
        return "exact"

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        return len(self.tokenizer.encode(text, add_special_tokens=False))


@dataclass(frozen=True)
class CharRatioEstimator:
    """``ceil(characters / chars_per_token)``: a heuristic, confidence ``low``."""

    chars_per_token: float = FALLBACK_CHARS_PER_TOKEN

    def __post_init__(self) -> None:
        if not self.chars_per_token > 0:
            raise ValueError(f"chars_per_token must be > 0, got {self.chars_per_token}")

    @property
    def name(self) -> str:
        return f"chars/{self.chars_per_token:g}"

    @property
    def confidence(self) -> Confidence:
        return "low"

    def count_text(self, text: str) -> int:
        return math.ceil(len(text) / self.chars_per_token)
