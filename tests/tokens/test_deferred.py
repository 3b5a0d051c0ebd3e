"""A deferred tokenizer: named and exact at once, loaded at its first need (or in the
thread its start began), and every count the loaded tokenizer's own."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from bonsai.services.tokens import (
    DeferredEstimator,
    TiktokenEstimator,
    TokenizerUnavailable,
    estimator_for,
    load_encoding,
    start_loading,
)
from bonsai.services.tokens.estimators import CharRatioEstimator
from bonsai.settings import ModelInfo

TEXT = "def parse(path):\n    return open(path).read()  # 'héllo' ✓\n"


def test_a_deferred_counter_counts_as_the_loaded_one_and_is_named_the_same(
    rank_cache: Path,
) -> None:
    info = ModelInfo(family="openai", context_window=128_000)
    lazy = estimator_for(
        info, cache_dir=rank_cache, tokenizer_path=None, model="gpt-4o", deferred=True
    )
    eager = estimator_for(info, cache_dir=rank_cache, tokenizer_path=None, model="gpt-4o")
    assert isinstance(lazy.estimator, DeferredEstimator) and not lazy.estimator.is_loaded
    assert isinstance(eager.estimator, TiktokenEstimator)
    assert lazy.name == eager.name == "tiktoken:o200k_base"
    assert lazy.estimator.confidence == "exact" and lazy.degraded_reason is None
    assert lazy.count_text(TEXT) == eager.count_text(TEXT)
    assert lazy.estimator.is_loaded
    assert lazy.estimator.encoding is eager.estimator.encoding  # type: ignore[attr-defined]


def test_a_count_waits_for_the_load_the_start_began() -> None:
    began, release = threading.Event(), threading.Event()
    loads: list[str] = []

    def load() -> CharRatioEstimator:
        began.set()
        release.wait(10)
        loads.append(threading.current_thread().name)
        return CharRatioEstimator(2.0)

    deferred = DeferredEstimator("slow:one", load)
    start_loading(deferred)
    start_loading(deferred)  # once
    assert began.wait(10)
    counted: list[int] = []
    counter = threading.Thread(target=lambda: counted.append(deferred.count_text("abcdef")))
    counter.start()
    counter.join(0.2)
    assert counter.is_alive() and not counted, "the count waits for the load"
    release.set()
    counter.join(10)
    assert counted == [3] and loads == ["bonsai-tokenizer:slow:one"], "loaded once, in the thread"


def test_a_failed_load_is_said_by_every_count_never_a_made_up_number() -> None:
    calls: list[int] = []

    def load() -> CharRatioEstimator:
        calls.append(1)
        raise OSError("the rank file vanished")

    deferred = DeferredEstimator("tiktoken:o200k_base", load)
    for _ in range(2):
        with pytest.raises(TokenizerUnavailable, match="the rank file vanished"):
            deferred.count_text("hello")
    assert calls == [1], "not retried at every count"


def test_a_rank_file_that_cannot_be_had_degrades_at_once_even_when_deferred(
    tmp_path: Path,
) -> None:
    info = ModelInfo(
        family="openai", context_window=128_000, tokenizer=str(tmp_path / "no.tiktoken")
    )
    counter = estimator_for(info, cache_dir=tmp_path / "cache", tokenizer_path=None, deferred=True)
    assert isinstance(counter.estimator, CharRatioEstimator)
    assert counter.degraded_reason is not None and "no.tiktoken" in counter.degraded_reason


def test_the_load_is_the_offline_one(rank_cache: Path) -> None:
    deferred = DeferredEstimator(
        "tiktoken:cl100k_base", lambda: TiktokenEstimator(load_encoding("cl100k_base", rank_cache))
    )
    assert deferred.count_text(TEXT) == len(
        load_encoding("cl100k_base", rank_cache).encode_ordinary(TEXT)
    )
