"""The agent's tools on a real temporary workspace."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from bonsai.agent.tools import files, search, shell
from bonsai.agent.tools.base import ToolContext, ToolFailure
from bonsai.agent.tools.registry import session_tools
from bonsai.core.turn.tool_output import REDACTED, page, redact, truncate
from bonsai.domain import content_hash
from bonsai.errors import InvalidParams
from bonsai.services.project_context.volatile import range_hash
from bonsai.settings import Settings


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "pkg" / "a.py").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    (ws / "pkg" / "b.py").write_text("def foo():\n    return 1\n\ndef foo_bar():\n    pass\n")
    (ws / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    return ToolContext(workspace=ws, session_id="s", turn_id="t", settings=Settings())


async def test_read_file_whole_and_range_with_evidence(ctx: ToolContext) -> None:
    whole = await files.read_file(ctx, {"path": "pkg/a.py"})
    assert whole.content.splitlines()[0] == "     1\tline 1"
    assert whole.evidence is not None and whole.evidence.path == "pkg/a.py"
    assert whole.evidence.start_line is None, "a whole-file read covers everything"
    raw = (ctx.workspace / "pkg" / "a.py").read_bytes()
    assert whole.evidence.content_hash == range_hash(ctx.workspace / "pkg" / "a.py", None, None)
    assert whole.evidence.content_hash == content_hash(raw), "the stale-read convention"

    part = await files.read_file(ctx, {"path": "pkg/a.py", "offset": 10, "limit": 5})
    assert part.content.splitlines()[0] == "    10\tline 10"
    assert "[lines 10-14 of 100]" in part.content
    assert (part.evidence.start_line, part.evidence.end_line) == (10, 14)
    assert part.evidence.content_hash == range_hash(ctx.workspace / "pkg" / "a.py", 10, 14)
    assert whole.evidence.covers(part.evidence) and not part.evidence.covers(whole.evidence)


async def test_read_refuses_binary_and_missing(ctx: ToolContext) -> None:
    with pytest.raises(ToolFailure, match="binary"):
        await files.read_file(ctx, {"path": "blob.bin"})
    with pytest.raises(ToolFailure, match="no such file"):
        await files.read_file(ctx, {"path": "nope.py"})


async def test_paths_are_confined_to_the_workspace(ctx: ToolContext, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    os.symlink(secret, ctx.workspace / "link.txt")
    for path in ("../secret.txt", str(secret), "link.txt"):
        with pytest.raises(ToolFailure, match="outside the workspace"):
            await files.read_file(ctx, {"path": path})
    with pytest.raises(ToolFailure, match="outside"):
        await files.write_file(ctx, {"path": "../evil.txt", "content": "x"})
    assert not (tmp_path / "evil.txt").exists()


async def test_edit_refuses_ambiguous_and_missing_matches(ctx: ToolContext) -> None:
    with pytest.raises(ToolFailure, match="matches 2 places"):
        await files.edit_file(ctx, {"path": "pkg/b.py", "old_string": "def foo", "new_string": "x"})
    with pytest.raises(ToolFailure, match="not found"):
        await files.edit_file(ctx, {"path": "pkg/b.py", "old_string": "zzz", "new_string": "x"})
    done = await files.edit_file(
        ctx, {"path": "pkg/b.py", "old_string": "return 1", "new_string": "return 2"}
    )
    assert "+    return 2" in done.content
    assert "return 2" in (ctx.workspace / "pkg" / "b.py").read_text()
    assert done.evidence is not None and done.evidence.kind == "edit"


async def test_write_creates_and_previews_a_diff(ctx: ToolContext) -> None:
    preview = files.TOOLS[3].preview
    assert preview is not None
    diff = preview(ctx, {"path": "new/c.py", "content": "x = 1\n"})
    assert diff is not None and "+x = 1" in diff
    result = await files.write_file(ctx, {"path": "new/c.py", "content": "x = 1\n"})
    assert "created new/c.py" in result.content
    assert (ctx.workspace / "new" / "c.py").read_text() == "x = 1\n"


async def test_grep_and_glob(ctx: ToolContext) -> None:
    found = await search.grep(ctx, {"pattern": r"def foo\b"})
    assert found.content == "pkg/b.py:1: def foo():"
    none = await search.grep(ctx, {"pattern": "nothing-here"})
    assert "no matches" in none.content
    with pytest.raises(ToolFailure, match="invalid regular expression"):
        await search.grep(ctx, {"pattern": "("})
    listed = await search.glob_tool(ctx, {"pattern": "**/*.py"})
    assert listed.content.splitlines() == ["pkg/a.py", "pkg/b.py"]


async def test_bash_captures_output_exit_code_and_timeout(ctx: ToolContext) -> None:
    ok = await shell.bash(ctx, {"command": "echo hi; echo err >&2"})
    assert "hi" in ok.content and "err" in ok.content and "[exit code 0]" in ok.content
    failing = await shell.bash(ctx, {"command": "exit 3"})
    assert failing.is_error and "[exit code 3]" in failing.content
    slow = await shell.bash(ctx, {"command": "sleep 30", "timeout": 1})
    assert "timed out after 1s" in slow.content and slow.is_error


async def test_bash_output_of_100_mb_stays_bounded(ctx: ToolContext) -> None:
    cmd = f"{sys.executable} -c \"import sys; [sys.stdout.write('x'*1048576) for _ in range(100)]\""
    result = await shell.bash(ctx, {"command": cmd, "timeout": 60})
    assert len(result.content) < 3 * 1024 * 1024
    assert "bytes of output dropped" in result.content


def test_truncation_keeps_head_and_tail_and_names_the_handle() -> None:
    text = "".join(f"{i:05d}\n" for i in range(10_000))
    cut = truncate(text, 24_000, 0.7, handle="call_1")
    assert cut.truncated and len(cut.text) < 24_500
    assert cut.text.startswith("00000\n") and cut.text.rstrip().endswith("09999")
    assert 'read_tool_output({"id": "call_1"' in cut.text
    assert "00000" in page(text, 0, 100, None, 24_000)
    assert page(text, 0, 100, "09999", 24_000).endswith("09999")


def test_redaction_catches_keys_and_env_assignments() -> None:
    text = (
        "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123\n"
        "token: ghp_abcdefghijklmnopqrstuvwxyz0123456789\n"
        "DB_PASSWORD='hunter2hunter2'\n"
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----\n"
        "harmless = 42\n"
    )
    result = redact(text)
    assert result.count == 4
    for secret in ("sk-proj-abc", "ghp_abc", "hunter2", "MIIEabc"):
        assert secret not in result.text
    assert REDACTED in result.text and "harmless = 42" in result.text


def test_hidden_tools_are_validated_and_smol_reduces_the_set() -> None:
    names = {t.name for t in session_tools([], smol=False)}
    assert {"read_file", "edit_file", "bash", "grep", "read_tool_output"} <= names
    assert "grep" not in {t.name for t in session_tools(["grep"], smol=False)}
    with pytest.raises(InvalidParams, match="valid: "):
        session_tools(["no_such_tool"], smol=False)
    smol = {t.name for t in session_tools([], smol=True)}
    assert smol < names and "bash" in smol and "glob" not in smol


async def test_edit_file_refuses_a_file_too_big_to_hold_and_diff(ctx: ToolContext) -> None:
    huge = ctx.workspace / "dump.sql"
    with huge.open("wb") as file:  # a hostile repository's 3 GiB file (sparse: no disk used)
        file.write(b"needle\n")
        file.truncate(3 << 30)
    with pytest.raises(ToolFailure, match=r"dump.sql is 3,221,225,472 bytes; edit_file edits"):
        await files.edit_file(ctx, {"path": "dump.sql", "old_string": "needle", "new_string": "x"})
    with huge.open("rb") as file:
        assert file.read(7) == b"needle\n", "the file is untouched"
    limit = files.MAX_EDIT_BYTES
    (ctx.workspace / "big.py").write_text("needle = 1\n" + "#" * (limit - 100) + "\n")
    done = await files.edit_file(
        ctx, {"path": "big.py", "old_string": "needle = 1", "new_string": "needle = 2"}
    )
    assert "edited big.py" in done.content, "a file under the limit is edited as before"


async def test_odd_file_names_are_one_line_each_and_can_be_named_back(ctx: ToolContext) -> None:
    odd = [
        "two\nlines.py",
        "ret\rurn.py",
        "\u202eyp.evil",
        os.fsdecode(b"bytes\xff.py"),
        "\x1b[2J.py",
    ]
    for name in odd:
        (ctx.workspace / name).write_text("needle\n")
    (ctx.workspace / "plain é.py").write_text("needle\n")
    listing = (await files.list_dir(ctx, {})).content.splitlines()
    found = (await search.glob_tool(ctx, {"pattern": "*"})).content.splitlines()
    grep = (await search.grep(ctx, {"pattern": "needle"})).content.splitlines()
    for name in odd:
        quoted = json.dumps(name)
        assert quoted in listing and quoted in found, "one line, quoted and escaped"
        assert f"{quoted}:1: needle" in grep
        back = await files.read_file(ctx, {"path": json.loads(quoted)})
        assert back.content.endswith("needle"), "the quoted form names the file in a call"
    assert "plain é.py" in listing and "plain é.py" in found, "ordinary names are left alone"
    assert not any(line.startswith(("lines.py", "urn.py")) for line in listing + found + grep)
