"""Count messages, tool schemas and whole requests for one model.

Counts are cached by content hash (bounded LRU): re-counting an unchanged
message is a hash and a dict lookup, never another encoder run. The cache
holds uncalibrated counts; the model's current calibration factor is applied
when a count is read, so a cached entry never goes stale when the factor moves.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict

from bonsai.domain import Message, content_hash
from bonsai.services.tokens.anthropic_api import ApiTokenCounter, anthropic_payload
from bonsai.services.tokens.cache import CacheStats, LRUCache
from bonsai.services.tokens.calibration import CalibrationSnapshot, CalibrationState, Calibrator
from bonsai.services.tokens.framing import FRAMING, FramingRule
from bonsai.services.tokens.images import image_tokens
from bonsai.services.tokens.tool_schema import render_tools
from bonsai.services.tokens.types import (
    Confidence,
    Count,
    Estimator,
    Family,
    combine,
    min_confidence,
)

log = logging.getLogger(__name__)

DEFAULT_CACHE_SIZE = 8192


def _tools_key(tools: Sequence[dict[str, Any]]) -> str | None:
    """The tools as given (their order and every key's order kept): one JSON text
    renders one way, so its count is the rendering's; None when it is not JSON."""
    try:
        return "j:" + content_hash(json.dumps(list(tools), separators=(",", ":")))
    except (TypeError, ValueError):
        return None


class _Raw(NamedTuple):
    """An uncalibrated count: estimated text tokens, image tokens, confidence ceiling,
    and the finished count for counters that do not calibrate."""

    text: int
    images: int
    cap: Confidence
    plain: Count


class CounterStats(BaseModel):
    """Cache and encoder activity of one :class:`TokenCounter`."""

    model_config = ConfigDict(frozen=True)

    cache: CacheStats
    encoder_calls: int
    api_calls: int


class TokenCounter:
    """Token counts for one model: text, messages, tool schemas, whole requests."""

    def __init__(
        self,
        estimator: Estimator,
        *,
        family: Family,
        model: str = "",
        calibrator: Calibrator | None = None,
        api: ApiTokenCounter | None = None,
        cache_size: int = DEFAULT_CACHE_SIZE,
        degraded_reason: str | None = None,
    ) -> None:
        self.estimator = estimator
        self.family: Family = family
        self.model = model
        self.framing: FramingRule = FRAMING[family]
        self._calibrator = calibrator
        self._api = api
        self._cache: LRUCache[_Raw] = LRUCache(cache_size)
        self._encoder_calls = 0
        self._static_reason = degraded_reason
        self._api_error: str | None = None

    @property
    def name(self) -> str:
        suffix = " + count_tokens API" if self._api is not None else ""
        return f"{self.estimator.name}{suffix}"

    @property
    def degraded_reason(self) -> str | None:
        """Why counts are weaker than this model's preferred tokenizer would give, if they are."""
        reasons = [r for r in (self._static_reason, self._api_error) if r]
        return "; ".join(reasons) if reasons else None

    @property
    def calibrates(self) -> bool:
        """True when counts are estimates corrected by the calibrator."""
        return self._calibrator is not None and self.estimator.confidence != "exact"

    def count_text(self, text: str) -> Count:
        key = "t:" + content_hash(text)
        raw = self._cache.get(key)
        if raw is None:
            raw = self._raw(self._encode(text), 0, "exact")
            self._cache.put(key, raw)
        return self._finish(raw)

    def count_message(self, message: Message) -> Count:
        key = "m:" + _message_key(message)
        raw = self._cache.get(key)
        if raw is None:
            raw = self._raw_message(message)
            self._cache.put(key, raw)
        return self._finish(raw)

    def count_tools(self, tools: Sequence[dict[str, Any]]) -> Count:
        """Tokens the tool definitions add to a request (an approximation: at best ``high``)."""
        if not tools:
            return Count(tokens=0, confidence="exact")
        given = _tools_key(tools)  # rendering costs more than the count: keyed before it
        raw = self._cache.get(given) if given else None
        if raw is None:
            rendered = render_tools(self.family, list(tools))
            key = "s:" + content_hash("\x00".join(rendered))
            raw = self._cache.get(key)
            if raw is None:
                text = sum(self.framing.per_tool + self._encode(r) for r in rendered)
                raw = self._raw(self.framing.tools_block + text, 0, "high")
                self._cache.put(key, raw)
            if given:
                self._cache.put(given, raw)
        return self._finish(raw)

    def count_request(
        self, messages: Iterable[Message], tools: Sequence[dict[str, Any]] = ()
    ) -> Count:
        """The whole request: messages, tools and reply priming; the weakest confidence wins."""
        parts = [self.count_message(m) for m in messages]
        parts.append(self.count_tools(tools))
        priming = "exact" if self.framing.documented else "high"
        parts.append(Count(tokens=self.framing.reply_priming, confidence=priming))
        return combine(parts)

    async def acount_request(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] = ()
    ) -> Count:
        """Like :meth:`count_request`, but exact through the count_tokens API when one is set.

        A fresh API answer also calibrates the local estimate. When the API
        fails the estimate is returned and :attr:`degraded_reason` says why.
        """
        estimate = self.count_request(messages, tools)
        if self._api is None:
            return estimate
        try:
            answer = await self._api.count(anthropic_payload(self.model, messages, tools))
        except Exception as exc:
            self._api_error = f"count_tokens API failed ({exc}); using the local estimate"
            log.warning("%s for model %s", self._api_error, self.model)
            return estimate
        self._api_error = None
        images = sum(image_tokens(self.family, m.images) for m in messages)
        if not answer.cached:
            self.observe_usage(estimate, answer.tokens + images)
        confidence: Confidence = "exact" if images == 0 else "high"
        return Count(tokens=answer.tokens + images, confidence=confidence, image_tokens=images)

    def observe_usage(self, estimate: Count, billed_input_tokens: int) -> bool:
        """Feed a provider's billed input tokens back for a request counted as ``estimate``."""
        if self._calibrator is None:
            return False
        images = estimate.image_tokens
        text_estimate = estimate.uncalibrated - images
        billed_text = max(0, billed_input_tokens - images)
        return self._calibrator.observe(self.model, text_estimate, billed_text)

    def calibration(self) -> CalibrationSnapshot | None:
        """This model's calibration for the ledger (``None`` without a calibrator)."""
        return self._calibrator.snapshot(self.model) if self._calibrator else None

    def calibration_state(self) -> CalibrationState | None:
        """What the calibrator learned (``None`` without one), to copy to another process."""
        return self._calibrator.state() if self._calibrator else None

    def adopt_calibration(self, state: CalibrationState) -> None:
        """Count with ``state`` as learned (a copy of another process's counter)."""
        if self._calibrator is not None:
            self._calibrator.adopt(state)

    def stats(self) -> CounterStats:
        api_calls = self._api.calls if self._api is not None else 0
        return CounterStats(
            cache=self._cache.stats(), encoder_calls=self._encoder_calls, api_calls=api_calls
        )

    def _encode(self, text: str) -> int:
        self._encoder_calls += 1
        return self.estimator.count_text(text)

    def _raw_message(self, message: Message) -> _Raw:
        rule = self.framing
        text = rule.per_message + self._encode(message.content)
        if message.name:
            text += rule.per_name + self._encode(message.name)
        for call in message.tool_calls:
            text += rule.per_tool_call + self._encode(call.name) + self._encode(call.arguments)
        cap: Confidence = "exact" if rule.documented else "high"
        if message.tool_calls or message.role == "tool" or message.images:
            cap = "high"
        return self._raw(text, image_tokens(self.family, message.images), cap)

    def _raw(self, text: int, images: int, cap: Confidence) -> _Raw:
        confidence = min_confidence(self.estimator.confidence, cap)
        plain = Count(tokens=text + images, confidence=confidence, image_tokens=images)
        return _Raw(text, images, cap, plain)

    def _finish(self, raw: _Raw) -> Count:
        if self._calibrator is None or self.estimator.confidence == "exact":
            return raw.plain
        calibrated = self._calibrator.apply(self.model, raw.text)
        return Count(
            tokens=calibrated.tokens + raw.images,
            confidence=min_confidence(calibrated.confidence, raw.cap),
            image_tokens=raw.images,
            raw_tokens=None if calibrated.raw_tokens is None else raw.text + raw.images,
        )


def _message_key(message: Message) -> str:
    """Content hash of every field that changes a message's count (ids excluded)."""
    fields = [message.role, message.name or "", str(message.images)]
    for call in message.tool_calls:
        fields += [call.name, call.arguments]
    fields.append(message.content)
    return content_hash("".join(f"{len(f)}:{f}" for f in fields))
