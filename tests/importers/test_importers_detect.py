"""``--format auto``: content sniffing with the extension as tie-breaker."""

from __future__ import annotations

from pathlib import Path

import pytest
from importer_helpers import FIXTURES

from bonsai.services.importers import ImportFormatError, detect_format, import_file, parse_text


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("openai_array.json", "openai"),
        ("mini_swe_agent.traj.json", "openai"),
        ("openai_chat.jsonl", "openai"),
        ("swe_text.traj", "swe-agent"),
        ("swe_function_calling.traj", "swe-agent"),
        ("openhands_runs.jsonl", "openhands"),
        ("chat.aider.chat.history.md", "aider"),
    ],
)
def test_fixtures_are_recognised(name: str, expected: str) -> None:
    path = FIXTURES / name
    assert detect_format(path, path.read_bytes()[:65536]) == expected
    assert import_file(path).format == expected


def test_content_wins_over_a_misleading_extension() -> None:
    head = (FIXTURES / "openhands_runs.jsonl").read_bytes()[:4096]
    assert detect_format(Path("renamed.json"), head) == "openhands"


def test_keys_inside_string_values_do_not_count() -> None:
    head = b'[{"role": "user", "content": "{\\"trajectory\\": [] }"}]'
    assert detect_format(Path("x.json"), head) == "openai"


def test_ambiguous_content_names_the_formats_and_the_extension_settles_it() -> None:
    head = b"[a link](x)\n# aider chat started at 2024-01-01\n"
    with pytest.raises(ImportFormatError) as caught:
        detect_format(Path("notes.txt"), head)
    message = str(caught.value)
    assert "ambiguous format: looks like aider and openai" in message
    assert "openai, swe-agent, openhands, aider" in message
    assert detect_format(Path("notes.md"), head) == "aider"


def test_unrecognised_content_lists_the_formats() -> None:
    with pytest.raises(ImportFormatError, match=r"unrecognised format.*openai, swe-agent"):
        detect_format(Path("plain.txt"), b"hello world\n")


def test_parse_text_auto_uses_the_source_name() -> None:
    session = parse_text('[{"role": "user", "content": "hi"}]', "auto", source="a.json")
    assert session.format == "openai"


def test_unknown_format_name_is_rejected() -> None:
    with pytest.raises(ImportFormatError, match="unknown format 'claude'"):
        import_file(FIXTURES / "openai_array.json", fmt="claude")
