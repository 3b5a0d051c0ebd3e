"""Offline rank files: hash checks, cache seeding, clear errors, no network."""

from __future__ import annotations

import gzip
import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bonsai.services.tokens.offline_tiktoken import (
    PINNED_SHA256,
    bundled_rank_file,
    cache_file_name,
    expected_sha256,
    load_encoding,
    seed_rank_file,
    tiktoken_source_hashes,
)
from bonsai.services.tokens.types import RankFileError, TokenizerUnavailable

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"

NO_NETWORK = """
import socket
def _refuse(*args, **kwargs):
    raise SystemExit("NETWORK ATTEMPT")
socket.getaddrinfo = _refuse
socket.create_connection = _refuse
socket.socket.connect = _refuse
"""


def _run_offline(script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TIKTOKEN_CACHE_DIR"}
    env["BONSAI_HOME"] = str(tmp_path / "home")
    code = NO_NETWORK + textwrap.dedent(script)
    return subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_pinned_hashes_equal_tiktokens_own_and_the_bundled_files() -> None:
    assert tiktoken_source_hashes()["o200k_base"] == PINNED_SHA256["o200k_base"]
    assert tiktoken_source_hashes()["cl100k_base"] == PINNED_SHA256["cl100k_base"]
    for name in ("o200k_base", "cl100k_base"):
        data = gzip.decompress(bundled_rank_file(name).read_bytes())
        assert hashlib.sha256(data).hexdigest() == expected_sha256(name)


def test_cache_file_is_named_after_the_sha1_of_the_blob_url() -> None:
    assert cache_file_name("o200k_base") == hashlib.sha1(O200K_URL.encode()).hexdigest()


def test_fresh_process_loads_o200k_offline_and_plain_tiktoken_then_works(tmp_path: Path) -> None:
    result = _run_offline(
        """
        import sys
        from pathlib import Path
        import tiktoken
        from bonsai.services.tokens.offline_tiktoken import load_encoding
        cache = Path(sys.argv[1]) / "cache"
        enc = load_encoding("o200k_base", cache)
        print(len(enc.encode("hello world")))
        fox = "The quick brown fox jumps over the lazy dog."
        print(len(tiktoken.get_encoding("o200k_base").encode(fox)))
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["2", "10"]
    seeded = tmp_path / "cache" / cache_file_name("o200k_base")
    assert hashlib.sha256(seeded.read_bytes()).hexdigest() == PINNED_SHA256["o200k_base"]


def test_default_cache_dir_is_under_bonsai_home(tmp_path: Path) -> None:
    result = _run_offline(
        """
        from bonsai.services.tokens.offline_tiktoken import load_encoding
        print(load_encoding("cl100k_base").name)
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "cl100k_base"
    assert (tmp_path / "home" / "cache" / "tiktoken" / cache_file_name("cl100k_base")).is_file()


def test_missing_bundled_data_gives_a_clear_error_not_a_download(tmp_path: Path) -> None:
    result = _run_offline(
        """
        import sys
        from pathlib import Path
        from bonsai.services.tokens.offline_tiktoken import load_encoding
        from bonsai.services.tokens.types import TokenizerUnavailable
        base = Path(sys.argv[1])
        try:
            load_encoding("o200k_base", base / "cache", data_dir=base / "no-such-dir")
        except TokenizerUnavailable as exc:
            print("ERROR", exc)
        """,
        tmp_path,
    )
    assert "NETWORK ATTEMPT" not in result.stderr + result.stdout
    assert result.stdout.startswith("ERROR no rank file for o200k_base")
    assert "no-such-dir/o200k_base.tiktoken.gz does not exist" in result.stdout


def test_tampered_configured_file_is_refused_naming_file_and_both_hashes(
    tmp_path: Path, rank_cache: Path
) -> None:
    good = (rank_cache / cache_file_name("o200k_base")).read_bytes()
    tampered = good.replace(b"IQ== 0", b"IQ== 9", 1)
    source = tmp_path / "o200k_base.tiktoken"
    source.write_bytes(tampered)
    cache = tmp_path / "cache"
    with pytest.raises(RankFileError) as info:
        seed_rank_file("o200k_base", cache, source=source)
    message = str(info.value)
    assert str(source) in message
    assert hashlib.sha256(tampered).hexdigest() in message
    assert PINNED_SHA256["o200k_base"] in message
    assert not (cache / cache_file_name("o200k_base")).exists()


def test_rank_file_of_another_encoding_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RankFileError, match="does not match o200k_base"):
        seed_rank_file("o200k_base", tmp_path, source=bundled_rank_file("cl100k_base"))


def test_configured_gzip_and_plain_sources_are_both_accepted(
    tmp_path: Path, rank_cache: Path
) -> None:
    plain = tmp_path / "plain.tiktoken"
    plain.write_bytes((rank_cache / cache_file_name("cl100k_base")).read_bytes())
    first = seed_rank_file("cl100k_base", tmp_path / "a", source=plain)
    second = seed_rank_file("cl100k_base", tmp_path / "b", source=bundled_rank_file("cl100k_base"))
    assert (first.action, second.action) == ("written", "written")
    assert first.cache_file.read_bytes() == second.cache_file.read_bytes()


def test_corrupt_cache_file_is_replaced_from_the_source(tmp_path: Path) -> None:
    first = seed_rank_file("cl100k_base", tmp_path)
    first.cache_file.write_bytes(b"garbage")
    again = seed_rank_file("cl100k_base", tmp_path)
    assert (first.action, again.action) == ("written", "repaired")
    data = again.cache_file.read_bytes()
    assert hashlib.sha256(data).hexdigest() == PINNED_SHA256["cl100k_base"]
    assert seed_rank_file("cl100k_base", tmp_path).action == "present"
    assert [p.name for p in tmp_path.iterdir()] == [cache_file_name("cl100k_base")]


def test_unknown_encoding_and_unreadable_source_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(TokenizerUnavailable, match="unknown tiktoken encoding 'p50k_base'"):
        load_encoding("p50k_base", tmp_path)
    with pytest.raises(TokenizerUnavailable, match="cannot read rank file"):
        seed_rank_file("o200k_base", tmp_path, source=tmp_path / "missing.tiktoken")
    broken = tmp_path / "broken.tiktoken.gz"
    broken.write_bytes(b"\x1f\x8b" + b"not really gzip")
    with pytest.raises(RankFileError, match="not valid gzip"):
        seed_rank_file("o200k_base", tmp_path, source=broken)


def test_loaded_encodings_count_known_strings(rank_cache: Path) -> None:
    o200k = load_encoding("o200k_base", rank_cache)
    cl100k = load_encoding("cl100k_base", rank_cache)
    assert len(o200k.encode("hello world")) == 2
    assert len(o200k.encode_ordinary("日本語のテキストを数える")) == 9
    assert len(cl100k.encode_ordinary("日本語のテキストを数える")) == 12
