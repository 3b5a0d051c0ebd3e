"""Token accounting per provider family: estimators, confidence, caching, calibration.

Entry point: :func:`estimator_for` builds a :class:`TokenCounter` for a model;
:class:`Calibrator` learns per-model corrections from billed usage. See
``docs/tokens.md``.
"""

from bonsai.services.tokens.anthropic_api import (
    ApiTokenCounter,
    CountTokensApi,
    anthropic_payload,
)
from bonsai.services.tokens.cache import CacheStats
from bonsai.services.tokens.calibration import (
    CalibrationConfig,
    CalibrationError,
    CalibrationSnapshot,
    CalibrationState,
    Calibrator,
)
from bonsai.services.tokens.counter import CounterStats, TokenCounter
from bonsai.services.tokens.deferred import DeferredEstimator, start_loading
from bonsai.services.tokens.estimators import (
    CharRatioEstimator,
    HFTokenizerEstimator,
    TiktokenEstimator,
)
from bonsai.services.tokens.factory import estimator_for
from bonsai.services.tokens.images import image_tokens
from bonsai.services.tokens.offline_tiktoken import (
    default_cache_dir,
    load_encoding,
    seed_rank_file,
)
from bonsai.services.tokens.types import (
    Confidence,
    Count,
    Estimator,
    RankFileError,
    TokenizerUnavailable,
    combine,
    min_confidence,
)

__all__ = [
    "ApiTokenCounter",
    "CacheStats",
    "CalibrationConfig",
    "CalibrationError",
    "CalibrationSnapshot",
    "CalibrationState",
    "Calibrator",
    "CharRatioEstimator",
    "Confidence",
    "Count",
    "CountTokensApi",
    "CounterStats",
    "DeferredEstimator",
    "Estimator",
    "HFTokenizerEstimator",
    "RankFileError",
    "TiktokenEstimator",
    "TokenCounter",
    "TokenizerUnavailable",
    "anthropic_payload",
    "combine",
    "default_cache_dir",
    "estimator_for",
    "image_tokens",
    "load_encoding",
    "min_confidence",
    "seed_rank_file",
    "start_loading",
]
