"""Image token rules and how messages report image tokens."""

from __future__ import annotations

from pathlib import Path

import pytest

from bonsai.domain import Message
from bonsai.services.tokens import estimator_for
from bonsai.services.tokens.images import (
    anthropic_image_tokens,
    image_tokens,
    openai_image_tokens,
)
from bonsai.settings import ModelInfo


@pytest.mark.parametrize(
    ("width", "height", "detail", "expected"),
    [
        (1024, 1024, "high", 765),  # scaled to 768x768: 4 tiles
        (512, 512, "high", 255),  # one tile
        (4096, 2048, "high", 1105),  # fit 2048x1024, then 1536x768: 6 tiles
        (4096, 2048, "low", 85),
    ],
)
def test_openai_tile_rule(width: int, height: int, detail: str, expected: int) -> None:
    assert openai_image_tokens(width, height, detail) == expected  # type: ignore[arg-type]


def test_anthropic_pixel_rule_with_resizing() -> None:
    assert anthropic_image_tokens(1000, 1000) == 1334  # 1e6 / 750, rounded up
    assert anthropic_image_tokens(200, 300) == 80
    assert 1500 < anthropic_image_tokens(4000, 3000) <= 1534  # shrunk to ~1.15 megapixels


def test_unknown_sizes_use_the_documented_defaults() -> None:
    assert image_tokens("openai", 2) == 2 * 765
    assert image_tokens("anthropic", 1) == 1600
    assert image_tokens("anthropic", 1, width=1000, height=1000) == 1334
    assert image_tokens("deepseek", 0) == 0
    with pytest.raises(ValueError, match="image size must be positive"):
        openai_image_tokens(0, 10)
    with pytest.raises(ValueError, match="image count must be >= 0"):
        image_tokens("openai", -1)


def test_message_count_reports_its_image_tokens(rank_cache: Path) -> None:
    counter = estimator_for(
        ModelInfo(family="openai"), cache_dir=rank_cache, tokenizer_path=None, model="gpt-4o"
    )
    text_only = counter.count_message(Message(role="user", content="what is this?"))
    with_images = counter.count_message(Message(role="user", content="what is this?", images=2))
    assert with_images.image_tokens == 1530
    assert with_images.tokens == text_only.tokens + 1530
    assert (text_only.confidence, with_images.confidence) == ("exact", "high")
    request = counter.count_request([Message(role="user", content="see", images=1)])
    assert request.image_tokens == 765


def test_anthropic_messages_use_the_anthropic_default() -> None:
    counter = estimator_for(
        ModelInfo(family="anthropic"), cache_dir=Path("/nonexistent"), tokenizer_path=None
    )
    count = counter.count_message(Message(role="user", content="", images=1))
    assert count.image_tokens == 1600
