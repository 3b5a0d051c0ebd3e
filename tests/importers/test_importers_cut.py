"""A recording whose writer was killed mid-write: its cut last line is left out
with a warning naming the file and line; a bad line elsewhere is still an error."""

from __future__ import annotations

import json
import os
import random
import time
import tracemalloc
from pathlib import Path

import pytest
import recordings

from bonsai.services.importers import ImportFormatError, import_file, parse_text
from bonsai.services.importers.json_prefix import is_cut_json
from bonsai.services.importers.jsonread import cut_warning

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("BONSAI_TRAJECTORIES", ROOT.parent / "shared" / "trajectories"))
REAL = CORPUS / "openhands"
RESOLVER = REAL / "resolver_mock_output.jsonl"


def test_a_cut_last_line_imports_with_a_warning_naming_file_and_line() -> None:
    text = recordings.claude_code()
    whole = parse_text(text, "claude-code", source="s.jsonl")
    cut = text + '{"type":"assist'
    line = cut.count("\n") + 1
    session = parse_text(cut, "auto", source="s.jsonl")
    assert session.messages == whole.messages
    assert session.warnings[0] == (
        f"line {line} of s.jsonl is cut off (the recording ended mid-write); it was skipped"
    )


def test_an_openhands_event_stream_one_event_a_line_warns_of_its_cut_line() -> None:
    events = json.loads(recordings.openhands_events())
    text = "\n".join(json.dumps(event) for event in events) + "\n"
    whole = parse_text(text, "openhands", source="e.jsonl")
    session = parse_text(text + '{"id": 5, "source": "ag', "openhands", source="e.jsonl")
    assert session.messages == whole.messages
    assert session.warnings[0] == (
        f"line {len(events) + 1} of e.jsonl is cut off (the recording ended mid-write); "
        "it was skipped"
    )


def test_a_bad_line_in_the_middle_or_ended_by_a_newline_still_fails() -> None:
    text = recordings.codex()
    lines = text.split("\n")
    middle = "\n".join([lines[0], '{"type":"assist', *lines[1:]])
    with pytest.raises(ImportFormatError, match=r"r.jsonl:2:\d+: invalid JSON"):
        parse_text(middle, "codex", source="r.jsonl")
    with pytest.raises(ImportFormatError, match="invalid JSON"):
        parse_text(text + '{"type":"assist\n', "codex", source="r.jsonl")
    with pytest.raises(ImportFormatError, match="invalid JSON"):
        parse_text(text + '{"type":}', "codex", source="r.jsonl")  # wrong, not cut


def test_prefix_check() -> None:
    for cut in ['{"a":1', '{"a":"x\\u00', "[1,-", '{"a":tr', '{"a":-Inf', '{"a":1.5e+', "{"]:
        assert is_cut_json(cut), cut
    for bad in ['{"a":}', '{"a":1}}', '{"a":1,}', '{"a":01', '{"a":1.e', '{"a":1} {', " ", "{}"]:
        assert not is_cut_json(bad), bad


@pytest.mark.skipif(
    not RESOLVER.exists(), reason=f"no shared recordings at {RESOLVER} (set BONSAI_TRAJECTORIES)"
)
def test_a_real_recording_cut_anywhere_imports_with_the_warning_or_fails_clearly(
    tmp_path: Path,
) -> None:
    data = RESOLVER.read_bytes()
    first_end = data.index(b"\n") + 1
    whole = import_file(RESOLVER)
    rng = random.Random(7)
    cuts = [first_end - 1, first_end, first_end + 1, len(data) - 2]
    cuts += [rng.randrange(first_end + 1, len(data) - 1) for _ in range(20)]
    for at in cuts:
        path = tmp_path / "out.jsonl"
        path.write_bytes(data[:at])
        try:
            session = import_file(path)
        except ImportFormatError as error:
            assert at < first_end, (at, str(error))
            assert str(error).startswith(str(path)), str(error)
            continue
        assert session.messages == whole.messages  # run 0 is whole: nothing else dropped
        if at > first_end:
            assert session.runs == 1
            assert session.warnings[0].startswith(f"line 2 of {path} is cut off"), at


def test_a_claude_code_session_whose_first_record_is_1_mib_is_detected(tmp_path: Path) -> None:
    text = recordings.claude_code()
    first, rest = text.split("\n", 1)
    pasted = first.replace('"summary":', '"pasted":"' + "x" * (1024 * 1024) + '","summary":', 1)
    assert len(pasted) > 1024 * 1024, first[:200]
    path = tmp_path / "s.jsonl"
    path.write_text(pasted + "\n" + rest, encoding="utf-8")
    assert import_file(path).format == "claude-code"


def test_a_2_gb_file_of_one_line_is_refused_at_once_without_being_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as handle:  # sparse: 2 GiB of one line, no newline
        handle.write(b'{"type":"user","x":"')
        handle.truncate(2 * 1024**3)
    tracemalloc.start()
    started = time.monotonic()
    with pytest.raises(ImportFormatError, match=r"huge.jsonl: is 2,048 MiB; recordings over"):
        import_file(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert time.monotonic() - started < 1.0
    assert peak < 1024 * 1024


@pytest.mark.parametrize("keep", [1, 2])  # "日" is 3 bytes: cut after its first or second
def test_a_recording_cut_inside_a_multi_byte_character_warns_of_its_cut_line(
    tmp_path: Path, keep: int
) -> None:
    text = recordings.claude_code()
    whole = parse_text(text, "claude-code", source="s.jsonl")
    tail = '{"type":"user","message":{"content":"déjà 日'.encode()
    path = tmp_path / "s.jsonl"
    path.write_bytes(text.encode("utf-8") + tail[: len(tail) - 3 + keep])
    session = import_file(path)
    assert session.messages == whole.messages
    line = text.count("\n") + 1
    assert session.warnings[0] == cut_warning(str(path), line)


@pytest.mark.parametrize("bad", [b"\xff", "日".encode()[:2] + b"\n", "日".encode()[:1] + b'x"}\n'])
def test_a_bad_byte_that_is_not_a_cut_character_at_the_end_is_still_refused(
    tmp_path: Path, bad: bytes
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(recordings.claude_code().encode("utf-8") + b'{"type":"user"' + bad)
    with pytest.raises(ImportFormatError, match="not valid UTF-8"):
        import_file(path)
