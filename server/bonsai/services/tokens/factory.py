"""Pick the best token counter a model's settings and this machine allow.

Preference per family: OpenAI → tiktoken (exact); DeepSeek/Qwen → their
``tokenizer.json`` through ``tokenizers`` (exact); Anthropic → the
count_tokens API (exact per request) over a calibrated estimate; anything
else → a calibrated chars/4 estimate. When the preferred tokenizer cannot be
had, the counter falls back to a calibrated estimate, its confidence drops and
``counter.degraded_reason`` says why.
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping, Sequence
from pathlib import Path
from typing import NamedTuple

from bonsai.services.tokens.anthropic_api import ApiTokenCounter, CountTokensApi
from bonsai.services.tokens.calibration import Calibrator
from bonsai.services.tokens.counter import DEFAULT_CACHE_SIZE, TokenCounter
from bonsai.services.tokens.deferred import DeferredEstimator
from bonsai.services.tokens.estimators import (
    ANTHROPIC_CHARS_PER_TOKEN,
    FALLBACK_CHARS_PER_TOKEN,
    OPEN_WEIGHTS_CHARS_PER_TOKEN,
    CharRatioEstimator,
    HFTokenizerEstimator,
    TiktokenEstimator,
)
from bonsai.services.tokens.hf_tokenizer import (
    KNOWN_PACKAGES,
    load_tokenizer,
    resolve_tokenizer_path,
)
from bonsai.services.tokens.offline_tiktoken import (
    SUPPORTED_ENCODINGS,
    load_encoding,
    seed_rank_file,
)
from bonsai.services.tokens.remote import RemoteCounting
from bonsai.services.tokens.types import Estimator, Family, TokenizerUnavailable
from bonsai.settings import ModelInfo

log = logging.getLogger(__name__)

DEFAULT_ENCODING = "o200k_base"
_RANK_SUFFIXES = (".tiktoken", ".gz")


class _Pick(NamedTuple):
    estimator: Estimator
    reason: str | None


def estimator_for(
    model_info: ModelInfo,
    *,
    cache_dir: Path,
    tokenizer_path: str | None,
    count_tokens_api: CountTokensApi | None = None,
    model: str = "",
    calibrator: Calibrator | None = None,
    api_store: MutableMapping[str, int] | None = None,
    cache_size: int = DEFAULT_CACHE_SIZE,
    tokenizer_packages: Sequence[str] | None = None,
    counting: RemoteCounting | None = None,
    deferred: bool = False,
) -> TokenCounter:
    """A :class:`TokenCounter` for ``model`` described by ``model_info``.

    ``cache_dir`` holds tiktoken rank files (see ``default_cache_dir()``).
    ``tokenizer_path`` (or a path in ``model_info.tokenizer``) names a
    ``tokenizer.json`` or a ``.tiktoken``/``.gz`` rank file. ``calibrator``
    is shared across counters (a private one is made when omitted);
    ``api_store`` persists count_tokens answers; ``tokenizer_packages``
    overrides which installed packages are searched for a tokenizer.json.
    ``counting`` makes an exact estimator that asks another process (the daemon)
    instead of loading the tokenizer here, chosen by the same rules, so the counts and
    the fallbacks agree (a tiktoken rank file is still found and checked here).
    ``deferred`` checks a tiktoken rank file now but builds the encoding when first
    needed (:class:`~bonsai.services.tokens.deferred.DeferredEstimator`: its counts wait
    for the load, ``start_loading`` begins it in a thread).
    """
    family: Family = model_info.family
    if count_tokens_api is not None and family == "anthropic" and not model:
        raise ValueError("a count_tokens API needs the model name: pass model=...")
    path = tokenizer_path or _path_like(model_info.tokenizer)
    packages = KNOWN_PACKAGES.get(family, ()) if tokenizer_packages is None else tokenizer_packages
    if path is not None and not path.endswith(_RANK_SUFFIXES):
        pick = _pick_hf(family, path, packages, counting)
    elif path is not None or _encoding_name(model_info.tokenizer) or family == "openai":
        encoding = _encoding_name(model_info.tokenizer) or _encoding_for_model(model)
        source = Path(path) if path else None
        pick = _pick_tiktoken(encoding, cache_dir, source, counting, deferred)
    elif family in ("deepseek", "qwen"):
        pick = _pick_hf(family, None, packages, counting)
    elif family == "anthropic":
        pick = _pick_anthropic(count_tokens_api)
    else:
        pick = _Pick(CharRatioEstimator(FALLBACK_CHARS_PER_TOKEN), None)
    if pick.reason:
        log.warning("token counting for %s is degraded: %s", model or family, pick.reason)
    api = None
    if family == "anthropic" and count_tokens_api is not None:
        api = ApiTokenCounter(count_tokens_api, store=api_store)
    return TokenCounter(
        pick.estimator,
        family=family,
        model=model,
        calibrator=calibrator if calibrator is not None else Calibrator(),
        api=api,
        cache_size=cache_size,
        degraded_reason=pick.reason,
    )


def _pick_tiktoken(
    encoding: str,
    cache_dir: Path,
    source: Path | None,
    counting: RemoteCounting | None,
    deferred: bool = False,
) -> _Pick:
    def load() -> TiktokenEstimator:
        return TiktokenEstimator(load_encoding(encoding, cache_dir, source=source))

    try:
        if counting is not None or deferred:  # the rank file checked as a load would
            seed_rank_file(encoding, cache_dir, source=source)
        if counting is not None:  # not loaded: another process counts
            return _Pick(counting.tiktoken(encoding), None)
        if deferred:
            return _Pick(DeferredEstimator(f"tiktoken:{encoding}", load), None)
        return _Pick(load(), None)
    except TokenizerUnavailable as exc:
        fallback = CharRatioEstimator(FALLBACK_CHARS_PER_TOKEN)
        return _Pick(fallback, f"{exc}; using a calibrated {fallback.name} estimate")


def _pick_hf(
    family: Family, path: str | None, packages: Sequence[str], counting: RemoteCounting | None
) -> _Pick:
    try:
        found = resolve_tokenizer_path(path, packages)
        if counting is not None:
            return _Pick(counting.tokenizers(found), None)
        return _Pick(HFTokenizerEstimator(load_tokenizer(found), found), None)
    except TokenizerUnavailable as exc:
        ratio = FALLBACK_CHARS_PER_TOKEN if family == "other" else OPEN_WEIGHTS_CHARS_PER_TOKEN
        fallback = CharRatioEstimator(ratio)
        return _Pick(fallback, f"{exc}; using a calibrated {fallback.name} estimate")


def _pick_anthropic(count_tokens_api: CountTokensApi | None) -> _Pick:
    estimator = CharRatioEstimator(ANTHROPIC_CHARS_PER_TOKEN)
    if count_tokens_api is not None:
        return _Pick(estimator, None)
    reason = f"no count_tokens API configured; using a calibrated {estimator.name} estimate"
    return _Pick(estimator, reason)


def _encoding_name(tokenizer: str | None) -> str | None:
    """``tokenizer`` when it names a tiktoken encoding rather than a file."""
    if tokenizer is None or _path_like(tokenizer) is not None:
        return None
    return tokenizer


def _path_like(tokenizer: str | None) -> str | None:
    if tokenizer is None:
        return None
    looks_like_path = "/" in tokenizer or "\\" in tokenizer or "." in tokenizer
    return tokenizer if looks_like_path else None


def _encoding_for_model(model: str) -> str:
    """tiktoken's encoding for an OpenAI model name (a table lookup, no download)."""
    import tiktoken.model  # lazy for start-up cost: with the first OpenAI model's counter

    try:
        name = tiktoken.model.encoding_name_for_model(model)
    except KeyError:
        return DEFAULT_ENCODING
    return name if name in SUPPORTED_ENCODINGS else DEFAULT_ENCODING
