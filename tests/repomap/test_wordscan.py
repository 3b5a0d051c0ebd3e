"""The C word scanner (``_wordscan.c``) finds exactly the words the Python scan
finds, on any bytes: a file's words decide which files an issue's text ranks,
so a scanner that differed would move the map. Both are checked against the
definition itself (the token pattern over the text, lower-cased, kept by length
and stop list, stemmed), read from the bytes one to one (latin-1: every byte
that is not an ASCII letter separates words)."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bonsai.services.repomap import words
from bonsai.services.repomap.words import MAX_LEN, MIN_LEN, STOP, file_words, stem

SERVER = Path(__file__).resolve().parents[2] / "server"


def _definition(source: bytes) -> set[str]:
    tokens = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", source.decode("latin-1"))
    lowered = {t.lower() for t in tokens}
    return {stem(w) for w in lowered if MIN_LEN <= len(w) <= MAX_LEN and w not in STOP}


def _native(source: bytes) -> set[str]:
    scan = words._native
    assert scan is not None, (
        "the C word scanner is not built: `./run test` builds it, or `pip install -e .`"
    )
    return scan(source)


def test_the_c_scanner_is_built_where_bonsai_is_installed() -> None:
    # ./run installs bonsai with setup.py's extension; a checkout without it would
    # silently scan in Python (and log it): here that is a failure
    assert words._native is not None


# letters of both cases (runs of capitals and capitalised words), digits, the
# separators code has, UTF-8 and stray high bytes, NUL
_ALPHABET = [*b"aeiourstlnABCEHPSTXYZ_09 .\n\t(){}'\"#", 0xC3, 0xA9, 0x80, 0xFF, 0x00]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_ALPHABET), max_size=400).map(bytes))
def test_any_bytes_give_the_same_words_in_c_in_python_and_by_definition(source: bytes) -> None:
    expected = _definition(source)
    assert words._python_source_stems(source) == expected
    assert _native(source) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (b"HTTPServer", {"http", "server"}),
        (b"parseHTTP", {"parse", "http"}),
        (b"XMLHttpRequest", {"xml", "http", "request"}),
        (b"ABc", set()),  # "A" and "Bc": both shorter than three letters
        (b"URLsABCD", {"abcd"}),  # "UR", "Ls", "ABCD"
        (b"ABCDefgh", {"abc", "defgh"}),
        (b"ab abc abcdefghijklmnopqrstuvwxyzabcd", {"abc", "abcdefghijklmnopqrstuvwxyzabcd"}),
        (b"abcdefghijklmnopqrstuvwxyzabcde", set()),  # 31 letters: longer than MAX_LEN
        (b"caf\xc3\xa9 na\xc3\xafve \xff\x00rows", {"caf", "row"}),  # "na", "ve": too short
        (b"the self return classes", {"class"}),  # stop words dropped, the rest stemmed
        (b"studies passes uses ties dress bus", {"study", "passe", "use", "tie", "dress", "bus"}),
        (b"analysis focus address", {"analysis", "focus", "address"}),  # -is, -us, -ss kept
        (b"", set()),
    ],
)
def test_edge_cases(source: bytes, expected: set[str]) -> None:
    assert _definition(source) == expected
    assert _native(source) == expected


def test_bonsais_own_sources_give_the_same_words() -> None:
    paths = sorted(SERVER.rglob("*.py"))
    assert len(paths) > 100
    for path in paths:
        source = path.read_bytes()
        assert _native(source) == words._python_source_stems(source), path


def test_a_file_of_a_megabyte_of_distinct_words_is_scanned_whole() -> None:
    # the scanner's table grows from 1,024 slots; a hostile file of only
    # distinct words makes it grow to hundreds of thousands
    letters = "bcdfghjklm"
    tokens = ["".join(letters[int(d)] for d in f"{k:06d}") for k in range(150_000)]
    source = " ".join(tokens).encode()
    assert len(source) > 1_000_000
    found = _native(source)
    assert found == words._python_source_stems(source)
    assert len(found) == 150_000


def test_bad_arguments_are_errors_not_crashes() -> None:
    from bonsai.services.repomap import _wordscan

    with pytest.raises(ValueError, match="word lengths"):
        _wordscan.source_stems(b"abc", STOP, 3, 40)
    with pytest.raises(TypeError):
        _wordscan.source_stems("not bytes", STOP, 3, 30)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        _wordscan.source_stems(b"abc", set(STOP), 3, 30)  # type: ignore[arg-type]


def test_without_the_c_scanner_the_words_are_the_same_and_the_fallback_is_logged(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    source = (SERVER / "bonsai" / "services" / "repomap" / "ranking.py").read_bytes()
    with_c = file_words("pkg/ranking.py", source)
    monkeypatch.setattr(words, "_native", None)
    monkeypatch.setattr(words, "_fallback_logged", False)
    with caplog.at_level(logging.WARNING, logger="bonsai.services.repomap.words"):
        assert file_words("pkg/ranking.py", source) == with_c
        assert file_words("pkg/ranking.py", source) == with_c
    warnings = [r for r in caplog.records if "C word scanner" in r.getMessage()]
    assert len(warnings) == 1  # once, not per file
