"""Malformed input: one clear error with the place of the problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from importer_helpers import FIXTURES

from bonsai.services.importers import ImportFormatError, import_file, parse_text


def test_truncated_json_reports_line_and_column() -> None:
    path = FIXTURES / "bad_truncated.json"
    with pytest.raises(ImportFormatError) as caught:
        import_file(path, fmt="openai")
    error = caught.value
    assert (error.line, error.column) == (3, 36)
    assert str(error).startswith(f"{path}:3:36: invalid JSON: Unterminated string")


def test_jsonl_line_that_is_not_an_object() -> None:
    with pytest.raises(ImportFormatError) as caught:
        import_file(FIXTURES / "bad_not_object.jsonl")
    assert caught.value.line == 2
    assert "expected a JSON object, found an array" in str(caught.value)


def test_jsonl_syntax_error_names_its_line() -> None:
    text = '{"role": "user", "content": "a"}\n{"role": "assistant", "content": }\n'
    with pytest.raises(ImportFormatError) as caught:
        parse_text(text, "openai", source="chat.jsonl")
    assert (caught.value.line, caught.value.column) == (2, 34)


@pytest.mark.parametrize(
    ("doc", "path", "message"),
    [
        ([{"role": "robot", "content": "x"}], "[0].role", "unknown role 'robot'"),
        ([{"role": "user", "content": 5}], "[0].content", "content must be a string"),
        (
            [{"role": "assistant", "tool_calls": [{"id": "a", "function": {"arguments": "{}"}}]}],
            "[0].tool_calls[0].function.name",
            "needs a function name",
        ),
        ({"chat": []}, "$", "expected an array of messages"),
    ],
)
def test_structural_errors_name_the_json_path(doc: object, path: str, message: str) -> None:
    with pytest.raises(ImportFormatError) as caught:
        parse_text(json.dumps(doc), "openai", source="s.json")
    assert caught.value.json_path == path
    assert message in str(caught.value)


def test_swe_agent_without_history_or_trajectory() -> None:
    with pytest.raises(ImportFormatError, match="non-empty history"):
        parse_text('{"history": [], "trajectory": []}', "swe-agent", source="x.traj")


def test_swe_agent_bad_role_names_the_history_entry() -> None:
    doc = {"history": [{"role": "system", "content": "s"}, {"role": "oracle", "content": "o"}]}
    with pytest.raises(ImportFormatError) as caught:
        parse_text(json.dumps(doc), "swe-agent", source="x.traj")
    assert caught.value.json_path == "history[1].role"


def test_openhands_history_must_be_an_array() -> None:
    with pytest.raises(ImportFormatError) as caught:
        parse_text('{"history": {}}\n', "openhands", source="out.jsonl")
    assert (caught.value.line, caught.value.json_path) == (1, "history")


def test_invalid_utf8_reports_where(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(b'[\n {"role": "user", "content": "\xff"}]')
    with pytest.raises(ImportFormatError) as caught:
        import_file(path, fmt="openai")
    assert (caught.value.line, caught.value.column) == (2, 31)
    assert "not valid UTF-8" in str(caught.value)


def test_missing_file_is_an_import_error(tmp_path: Path) -> None:
    with pytest.raises(ImportFormatError, match="cannot read the file"):
        import_file(tmp_path / "absent.json")


def test_single_run_formats_reject_another_run() -> None:
    with pytest.raises(ImportFormatError, match="holds 1 run"):
        import_file(FIXTURES / "openai_array.json", run=1)
