"""Counting through another process's tokenizer: the counts and the fallbacks are the
ones a local tokenizer gives, and a fragment seen again is not asked again."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from token_helpers import write_wordlevel

from bonsai.domain import Message
from bonsai.services.tokens import estimator_for
from bonsai.services.tokens.remote import RemoteCounting, RemoteEstimator, estimator_named
from bonsai.settings import ModelInfo

TEXTS = ["hello world", "naïve café 日本語\ttab", "def f(x):\n    return x * 2\n" * 40]


class Owner:
    """The process that has the tokenizer (the daemon), as the view process asks it."""

    def __init__(self, cache_dir: Path) -> None:
        self.cache_dir = cache_dir
        self.asked: list[str] = []

    def ask(self, name: str, texts: Sequence[str]) -> list[int]:
        self.asked += texts
        estimator = estimator_named(name, self.cache_dir)
        return [estimator.count_text(t) for t in texts]


def test_remote_counts_are_the_local_tokenizers(rank_cache: Path) -> None:
    owner = Owner(rank_cache)
    info = ModelInfo(family="openai")
    local = estimator_for(info, cache_dir=rank_cache, tokenizer_path=None, model="gpt-4o")
    remote = estimator_for(
        info,
        cache_dir=rank_cache,
        tokenizer_path=None,
        model="gpt-4o",
        counting=RemoteCounting(owner.ask),
    )
    assert isinstance(remote.estimator, RemoteEstimator)
    assert remote.name == local.name == "tiktoken:o200k_base"
    for text in TEXTS:
        message = Message(role="user", content=text)
        assert remote.count_message(message) == local.count_message(message)
        assert remote.count_text(text + "!") == local.count_text(text + "!")
    asked = len(owner.asked)
    remote.estimator.count_text(TEXTS[2])  # a fragment counted before: not asked again
    assert len(owner.asked) == asked


def test_a_tampered_rank_file_degrades_the_remote_counter_as_the_local_one(tmp_path: Path) -> None:
    source = tmp_path / "evil.tiktoken"
    source.write_bytes(b"aGVsbG8= 0\n")
    owner = Owner(tmp_path / "cache")
    info = ModelInfo(family="openai")
    remote = estimator_for(
        info,
        cache_dir=tmp_path / "cache",
        tokenizer_path=str(source),
        counting=RemoteCounting(owner.ask),
    )
    assert not isinstance(remote.estimator, RemoteEstimator)
    assert remote.degraded_reason and "does not match" in remote.degraded_reason
    assert remote.count_text("hello").tokens > 0 and owner.asked == []


def test_a_tokenizer_json_is_counted_by_its_owner(tmp_path: Path) -> None:
    path = write_wordlevel(tmp_path / "tok" / "tokenizer.json")
    owner = Owner(tmp_path / "cache")
    info = ModelInfo(family="qwen")
    local = estimator_for(info, cache_dir=tmp_path, tokenizer_path=str(path))
    remote = estimator_for(
        info, cache_dir=tmp_path, tokenizer_path=str(path), counting=RemoteCounting(owner.ask)
    )
    assert isinstance(remote.estimator, RemoteEstimator) and remote.name == local.name
    assert remote.count_text("hello world").tokens == local.count_text("hello world").tokens
    assert owner.asked == ["hello world"]
