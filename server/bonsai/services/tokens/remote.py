"""Exact counts from another process's tokenizer: a process that must agree with the
daemon's counts (the view process) without loading a tokenizer of its own (~45 MB for
tiktoken's o200k_base, once per process).

An exact estimator is named by what it loads (``tiktoken:o200k_base``,
``tokenizers:/path/tokenizer.json``), and the name is all the owner of the tokenizer
needs to count with the same one (:func:`estimator_named`). A :class:`RemoteEstimator`
asks through a synchronous ``ask(name, texts)`` (the view process: a frame to the
daemon and its answer) and keeps the counts it was given, so a fragment counted again
(a tool rendered in two requests, a message of two views) costs no second question.
Heuristic estimators (characters per token) are computed where they are needed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bonsai.domain import content_hash
from bonsai.services.tokens.cache import LRUCache
from bonsai.services.tokens.estimators import HFTokenizerEstimator, TiktokenEstimator
from bonsai.services.tokens.hf_tokenizer import load_tokenizer
from bonsai.services.tokens.offline_tiktoken import load_encoding
from bonsai.services.tokens.types import Confidence, Estimator, TokenizerUnavailable

Ask = Callable[[str, Sequence[str]], list[int]]
KEPT = 16_384  # fragments whose counts a remote estimator keeps

TIKTOKEN, TOKENIZERS = "tiktoken", "tokenizers"


@dataclass(frozen=True)
class RemoteEstimator:
    """The estimator ``name`` of another process, asked through ``ask``."""

    name: str
    ask: Ask
    kept: LRUCache[int] = field(default_factory=lambda: LRUCache(KEPT), compare=False)

    @property
    def confidence(self) -> Confidence:
        return "exact"

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        key = content_hash(text)
        known = self.kept.get(key)
        if known is None:
            known = self.ask(self.name, [text])[0]
            self.kept.put(key, known)
        return known


@dataclass(frozen=True)
class RemoteCounting:
    """How the token factory makes exact estimators in a process that loads no tokenizer."""

    ask: Ask

    def tiktoken(self, encoding: str) -> Estimator:
        return RemoteEstimator(f"{TIKTOKEN}:{encoding}", self.ask)

    def tokenizers(self, path: Path) -> Estimator:
        return RemoteEstimator(f"{TOKENIZERS}:{path}", self.ask)


_lock = threading.Lock()
_named: dict[str, Estimator] = {}


def estimator_named(name: str, cache_dir: Path, have: Sequence[Estimator] = ()) -> Estimator:
    """The exact estimator ``name`` stands for, in this process: one of ``have`` (the
    estimators of the counters this process already built) when one bears the name,
    else loaded once (a tiktoken encoding comes from the offline cache)."""
    for estimator in have:
        if estimator.name == name:
            return estimator
    with _lock:
        found = _named.get(name)
        if found is None:
            found = _named[name] = _load(name, cache_dir)
        return found


def _load(name: str, cache_dir: Path) -> Estimator:
    kind, _, what = name.partition(":")
    if kind == TIKTOKEN:
        return TiktokenEstimator(load_encoding(what, cache_dir))
    if kind == TOKENIZERS:
        return HFTokenizerEstimator(load_tokenizer(Path(what)), Path(what))
    raise TokenizerUnavailable(f"no exact estimator is named {name!r}")
