"""Entry format: byte-identical round trips, minimal edits, clear rejections."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from bonsai.services.memory.entry import EntryFormatError, read_entry, split_entry
from bonsai.services.memory.frontmatter_edit import edit_entry, render_new

TRICKY: dict[str, bytes] = {
    "plain": b"---\nname: plain\ndescription: d\ntype: user\n---\nBody text.\n",
    "crlf": b"---\r\nname: crlf\r\ndescription: windows\r\ntype: project\r\n---\r\n"
    b"Line 1\r\nLine 2\r\n",
    "unicode": "---\nname: unicode\ndescription: café ☕ naïve — 日本語\n---\n"
    "Ümlaut 🚀 body\n".encode(),
    "empty-body": b"---\nname: empty-body\ndescription: nothing below\n---\n",
    "no-final-newline": b"---\ndescription: x\n---\nno newline at end",
    "extra-keys": b"---\nzeta: 1\nname: extra-keys\ntags: [a, b]\nnested:\n  k: v\n"
    b"description: d\n---\nb\n",
    "comments": b"---\n# leading comment\nname: comments  # trailing\ntype: user # kind\n"
    b"---\nbody\n",
    "bom": "\ufeff---\ndescription: with bom\n---\nbody\n".encode(),
    "blank-lines": b"---\n\ndescription: spaced\n\n---\n\n\nbody after blanks\n\n\n",
    "quoted": b'---\ndescription: "has: colon # and hash"\ncreated: 2026-01-02\n---\nx\n',
    "dashes-in-body": b"---\ndescription: d\n---\nabove\n---\nbelow the rule\n",
    "empty-front": b"---\n---\nonly a body\n",
}


@pytest.mark.parametrize("stem", sorted(TRICKY))
def test_unmodified_entries_round_trip_byte_identically(tmp_path: Path, stem: str) -> None:
    path = tmp_path / f"{stem}.md"
    path.write_bytes(TRICKY[stem])
    parsed, entry = read_entry(path, "user")
    assert parsed.to_bytes() == TRICKY[stem]
    assert edit_entry(parsed).to_bytes() == TRICKY[stem]
    assert entry.name == stem


def test_parsed_fields(tmp_path: Path) -> None:
    path = tmp_path / "quoted.md"
    path.write_bytes(TRICKY["quoted"])
    _, entry = read_entry(path, "project")
    assert entry.description == "has: colon # and hash"
    assert entry.created == date(2026, 1, 2)
    assert entry.type == "project"  # missing type defaults from the tier
    assert entry.body == "x" and entry.enabled


def test_file_stem_is_the_authoritative_name(tmp_path: Path) -> None:
    path = tmp_path / "real-name.md"
    path.write_bytes(b"---\nname: something-else\ndescription: d\n---\nb\n")
    assert read_entry(path, "user")[1].name == "real-name"


def test_editing_one_key_keeps_comments_crlf_and_other_bytes() -> None:
    parsed = split_entry(TRICKY["comments"].decode())
    edited = edit_entry(parsed, set_keys={"type": "preference", "updated": date(2026, 7, 1)})
    assert edited.text == (
        "---\n# leading comment\nname: comments  # trailing\ntype: preference # kind\n"
        "updated: 2026-07-01\n---\nbody\n"
    )
    crlf = split_entry(TRICKY["crlf"].decode())
    new = edit_entry(crlf, set_keys={"description": "new: value"}, body="one\ntwo")
    assert new.text == (
        "---\r\nname: crlf\r\ndescription: 'new: value'\r\ntype: project\r\n---\r\none\r\ntwo\r\n"
    )


def test_removing_a_key_restores_the_original_bytes() -> None:
    parsed = split_entry(TRICKY["plain"].decode())
    disabled = edit_entry(parsed, set_keys={"enabled": False})
    assert "enabled: false\n" in disabled.text
    assert edit_entry(disabled, remove_keys=("enabled",)).to_bytes() == TRICKY["plain"]


def test_multiline_value_falls_back_to_a_full_reexport() -> None:
    text = "---\ndescription: >\n  folded\n  text\ntype: user\n---\nb\n"
    edited = edit_entry(split_entry(text), set_keys={"description": "short"})
    assert edited.text == "---\ndescription: short\ntype: user\n---\nb\n"


def test_render_new_is_canonical() -> None:
    fields = {"type": "user", "name": "x", "description": "yes", "created": date(2026, 1, 2)}
    assert render_new(fields, "\nhello\n\n").text == (
        "---\nname: x\ndescription: 'yes'\ntype: user\ncreated: 2026-01-02\n---\nhello\n"
    )


MALFORMED: dict[str, tuple[bytes, str]] = {
    "no-front": (b"just text\n", "no YAML front matter"),
    "unclosed": (b"---\nname: x\nbody\n", "not closed"),
    "bad-yaml": (b"---\nname: [unclosed\n---\nb\n", "invalid YAML"),
    "list-front": (b"---\n- a\n- b\n---\nb\n", "must be a mapping"),
    "bad-type": (b"---\ntype: secret\n---\nb\n", "'type' must be one of"),
    "long-desc": (b"---\ndescription: " + b"x" * 161 + b"\n---\nb\n", "161 characters"),
    "big-body": (b"---\ndescription: d\n---\n" + b"y" * 4097 + b"\n", "4097 bytes"),
    "not-utf8": (b"---\ndescription: \xff\xfe\n---\nb\n", "not UTF-8"),
    "Bad_Name": (b"---\ndescription: d\n---\nb\n", "not kebab-case"),
    "bad-enabled": (b"---\nenabled: maybe\n---\nb\n", "'enabled' must be true or false"),
}


@pytest.mark.parametrize("stem", sorted(MALFORMED))
def test_malformed_entries_are_rejected_with_the_reason(tmp_path: Path, stem: str) -> None:
    data, reason = MALFORMED[stem]
    path = tmp_path / f"{stem}.md"
    path.write_bytes(data)
    with pytest.raises(EntryFormatError, match=reason):
        read_entry(path, "user")
    assert path.read_bytes() == data


def test_a_yaml_error_names_the_files_line_and_column() -> None:
    with pytest.raises(EntryFormatError, match="at line 2, column 15: mapping values"):
        split_entry("---\ndescription: a: b\n---\nbody\n")
