"""Image token rules per provider family.

Image payloads are stripped from messages before storage, so their sizes are
usually unknown: :data:`DEFAULT_IMAGE_TOKENS` holds the assumption used then.

* OpenAI (and, by default, every family without its own rule): a high-detail
  image is fitted inside 2048×2048, then scaled so its short side is at most
  768 px, and costs 85 + 170 per 512-px tile; low detail costs 85. The default
  assumes a 1024×1024 high-detail image: 4 tiles, 765 tokens.
* Anthropic: about width×height/750 after the image is shrunk to at most
  1568 px on its long edge and about 1.15 megapixels. The default is the
  documented ceiling for a full-size image, about 1,600 tokens.
"""

from __future__ import annotations

import math
from typing import Literal

from bonsai.services.tokens.types import Family

Detail = Literal["high", "low"]

OPENAI_BASE = 85
OPENAI_PER_TILE = 170
ANTHROPIC_PIXELS_PER_TOKEN = 750
ANTHROPIC_MAX_EDGE = 1568
ANTHROPIC_MAX_PIXELS = 1_150_000

DEFAULT_IMAGE_TOKENS: dict[Family, int] = {
    "openai": 765,
    "anthropic": 1600,
    "deepseek": 765,
    "qwen": 765,
    "other": 765,
}


def openai_image_tokens(width: int, height: int, detail: Detail = "high") -> int:
    """Tokens OpenAI bills for one ``width``×``height`` image."""
    _check_size(width, height)
    if detail == "low":
        return OPENAI_BASE
    w, h = float(width), float(height)
    fit = min(1.0, 2048 / max(w, h))
    w, h = w * fit, h * fit
    shrink = min(1.0, 768 / min(w, h))
    w, h = w * shrink, h * shrink
    tiles = math.ceil(w / 512) * math.ceil(h / 512)
    return OPENAI_BASE + OPENAI_PER_TILE * tiles


def anthropic_image_tokens(width: int, height: int) -> int:
    """Tokens Anthropic bills for one ``width``×``height`` image (after its resizing)."""
    _check_size(width, height)
    w, h = float(width), float(height)
    scale = min(1.0, ANTHROPIC_MAX_EDGE / max(w, h), math.sqrt(ANTHROPIC_MAX_PIXELS / (w * h)))
    return math.ceil((w * scale) * (h * scale) / ANTHROPIC_PIXELS_PER_TOKEN)


def image_tokens(
    family: Family,
    count: int,
    *,
    width: int | None = None,
    height: int | None = None,
) -> int:
    """Tokens for ``count`` images of one family; the default size when unknown."""
    if count < 0:
        raise ValueError(f"image count must be >= 0, got {count}")
    if count == 0:
        return 0
    if width is None or height is None:
        return count * DEFAULT_IMAGE_TOKENS[family]
    if family == "anthropic":
        return count * anthropic_image_tokens(width, height)
    return count * openai_image_tokens(width, height)


def _check_size(width: int, height: int) -> None:
    if width <= 0 or height <= 0:
        raise ValueError(f"image size must be positive, got {width}x{height}")
