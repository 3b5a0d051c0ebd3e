"""Evidence heuristics for shell commands and named tools."""

from __future__ import annotations

import pytest

from bonsai.domain import content_hash
from bonsai.services.importers.evidence import tool_evidence, window_range
from bonsai.services.importers.shell import shell_evidence


@pytest.mark.parametrize(
    ("command", "kind", "path", "start", "end"),
    [
        ("grep -rn foo src", "search", None, None, None),
        ("cd /repo && git grep -n foo", "search", None, None, None),
        ("cat src/a.py | grep foo", "search", None, None, None),
        ("find . -name '*.py'", "search", None, None, None),
        ("cat src/a.py", "read", "src/a.py", None, None),
        ("cd /repo && cat 'my file.txt'", "read", "my file.txt", None, None),
        ("sed -n '10,20p' src/a.py", "read", "src/a.py", 10, 20),
        ("head -n 5 README.md", "read", "README.md", 1, 5),
        ("ls -la src", "list", "src", None, None),
        ("cat > out.txt << 'EOF'\nhello\nEOF", "write", "out.txt", None, None),
        ("echo hi >> log.txt", "write", "log.txt", None, None),
        ("python -m pytest -q", "command", None, None, None),
        ("cat a.py b.py", "command", None, None, None),
        ("echo 'unbalanced", "command", None, None, None),
    ],
)
def test_shell_commands(
    command: str, kind: str, path: str | None, start: int | None, end: int | None
) -> None:
    evidence = shell_evidence(command)
    assert (evidence.kind, evidence.path, evidence.start_line, evidence.end_line) == (
        kind,
        path,
        start,
        end,
    )


def test_named_read_tool_hashes_the_returned_text() -> None:
    evidence = tool_evidence("Read", '{"file_path": "a.py", "offset": 3, "limit": 4}', "xyz")
    assert evidence is not None
    assert (evidence.kind, evidence.path, evidence.start_line, evidence.end_line) == (
        "read",
        "a.py",
        3,
        6,
    )
    assert evidence.content_hash == content_hash("xyz")


def test_editor_view_of_a_directory_is_a_listing() -> None:
    result = "Here's the files and directories up to 2 levels deep in /r, excluding hidden items:\n"
    evidence = tool_evidence("str_replace_editor", '{"command": "view", "path": "/r"}', result)
    assert evidence is not None and (evidence.kind, evidence.path) == ("list", "/r")


def test_a_clipped_whole_file_view_covers_only_the_lines_it_showed() -> None:
    result = (
        "Here's the result of running `cat -n` on /r/big.c:\n"
        "     1\tint a;\n     2\tint b;\n   117\tint c;<response clipped><NOTE>...</NOTE>"
    )
    evidence = tool_evidence(
        "str_replace_editor", '{"command": "view", "path": "/r/big.c"}', result
    )
    assert evidence is not None
    assert (evidence.kind, evidence.start_line, evidence.end_line) == ("read", 1, 117)


def test_failed_reads_carry_no_hash() -> None:
    evidence = shell_evidence("cat missing.txt", ok=False)
    assert evidence.kind == "read"
    assert tool_evidence("bash", '{"command": "cat missing.txt"}', "No such file", ok=False) == (
        evidence
    )
    assert evidence.content_hash is None


def test_unknown_tools_and_bad_arguments_give_no_evidence() -> None:
    assert tool_evidence("deploy", '{"path": "x"}', "") is None
    assert tool_evidence("read_file", "not json", "") is None


def test_window_range_whole_file_and_partial() -> None:
    whole = "[File: a.py (2 lines total)]\n1:x\n2:y\n"
    part = "[File: a.py (900 lines total)]\n(9 more lines above)\n10:x\n11:y\n"
    assert window_range(whole) == (None, None)
    assert window_range(part) == (10, 11)
