"""A large file's words are all found, wherever they sit in it: the source is
tokenised in slices (``words.SCAN_BYTES``), and no word near a slice's end may
be lost, cut in two or glued to its neighbour: the words equal those of one
pass over the whole text."""

from __future__ import annotations

import re

from bonsai.services.repomap.words import MAX_WORDS, SCAN_BYTES, STOP, file_words, stem


def _one_pass(path: str, source: bytes) -> tuple[str, ...]:
    tokens = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", source.decode() + " " + path)
    lowered = {t.lower() for t in tokens}
    return tuple(sorted({stem(w) for w in lowered if 3 <= len(w) <= 30 and w not in STOP}))


def _word(k: int) -> str:
    return "".join("qrtuvwxyzk"[int(d)] for d in str(k))


def test_a_large_file_has_the_words_of_one_pass_over_it() -> None:
    lines = [
        f"def report_{_word(k)}(): return fetchRow{_word(k).title()} + HTTPError  # quota\n"
        for k in range(3 * SCAN_BYTES // 70)
    ]
    source = "".join(lines).encode()
    assert len(source) > 2 * SCAN_BYTES
    words = file_words("pkg/report.py", source)
    assert len(words) < MAX_WORDS  # nothing cut by the cap: every word must be there
    assert words == _one_pass("pkg/report.py", source)
    assert {
        "report",
        "fetch",
        "row",
        "http",
        "error",
        "quota",
        "pkg",
        stem(_word(len(lines) - 1)),
    } <= set(words)


def test_a_unique_word_at_a_slice_end_is_whole() -> None:
    # nothing but distinct words: wherever a slice ends, it ends next to one
    words = [_word(k) * 5 for k in range(1000, 4990)]
    lines = [" ".join(words[i : i + 10]) + "\n" for i in range(0, len(words), 10)]
    source = "".join(lines).encode()
    assert len(source) > SCAN_BYTES
    found = file_words("m.py", source)
    assert found == _one_pass("m.py", source)
    assert {stem(w) for w in words} <= set(found)


def test_words_split_at_every_non_letter_as_one_pass_does() -> None:
    # digits, underscores, non-ASCII letters and punctuation all end a word;
    # capitals split it (camelCase, an acronym before a word)
    source = (
        "naïveParser_v2 = HTTPServerError404('café au lait')  # XMLHttpRequest\n"
        "ABCdefGHI jklMNOpqr __dunder__ snake_case_name über\tTAB\r\nline2end"
    ).encode()
    words = file_words("src/mixedCase.py", source)
    assert words == _one_pass("src/mixedCase.py", source)
    assert {"parser", "http", "server", "error", "xml", "request", "dunder", "snake"} <= set(words)
