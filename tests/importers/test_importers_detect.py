"""``--format auto``: the content decides, never the file name."""

from __future__ import annotations

from pathlib import Path

import pytest
from importer_helpers import FIXTURES
from recordings import ALL_FORMATS

from bonsai.services.importers import (
    FORMATS,
    ImportFormatError,
    detect_format,
    import_file,
    parse_text,
)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("openai_array.json", "openai"),
        ("mini_swe_agent.traj.json", "mini-swe-agent"),
        ("openai_chat.jsonl", "openai"),
        ("swe_text.traj", "swe-agent"),
        ("swe_function_calling.traj", "swe-agent"),
        ("openhands_runs.jsonl", "openhands"),
        ("chat.aider.chat.history.md", "aider"),
    ],
)
def test_fixtures_are_recognised(name: str, expected: str) -> None:
    path = FIXTURES / name
    data = path.read_bytes()
    assert detect_format(path, data[:65536], data[-4096:]) == expected
    assert import_file(path).format == expected


@pytest.mark.parametrize("fmt", sorted(ALL_FORMATS))
def test_every_format_is_recognised_under_a_meaningless_name(fmt: str, tmp_path: Path) -> None:
    path = tmp_path / "recording.data"
    path.write_text(ALL_FORMATS[fmt](), encoding="utf-8")
    session = import_file(path)
    assert session.format == fmt
    assert session.messages


def test_every_supported_format_has_a_generated_recording() -> None:
    assert set(ALL_FORMATS) == set(FORMATS)


def test_content_wins_over_a_misleading_extension(tmp_path: Path) -> None:
    path = tmp_path / "looks_like.traj"  # the SWE-agent extension, holding OpenHands output
    path.write_bytes((FIXTURES / "openhands_runs.jsonl").read_bytes())
    assert import_file(path).format == "openhands"
    aider = tmp_path / "chat.json"
    aider.write_bytes((FIXTURES / "chat.aider.chat.history.md").read_bytes())
    assert import_file(aider).format == "aider"


def test_keys_inside_string_values_do_not_count() -> None:
    head = b'[{"role": "user", "content": "{\\"trajectory\\": [] }"}]'
    assert detect_format(Path("x.json"), head) == "openai"


def test_mini_swe_agent_is_recognised_by_the_format_key_at_the_end_of_a_big_file() -> None:
    body = b'{"info": {}, "messages": [' + b'{"role": "user", "content": "x"},' * 5000
    tail = b'{"role": "user", "content": "x"}], "trajectory_format": "mini-swe-agent-1.1"}'
    assert detect_format(Path("t.json"), body[:65536], tail) == "mini-swe-agent"


def test_unsupported_content_lists_every_supported_format() -> None:
    with pytest.raises(ImportFormatError) as caught:
        detect_format(Path("plain.txt"), b"hello world\n")
    message = str(caught.value)
    assert message.startswith("plain.txt: unrecognised format; the supported formats are")
    for name in FORMATS:
        assert name in message


def test_parse_text_detects_too() -> None:
    session = parse_text('[{"role": "user", "content": "hi"}]', "auto", source="a.md")
    assert session.format == "openai"


def test_unknown_format_name_is_rejected() -> None:
    with pytest.raises(ImportFormatError, match="unknown format 'claude'"):
        import_file(FIXTURES / "openai_array.json", fmt="claude")
