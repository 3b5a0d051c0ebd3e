"""One attack per finding of issue 17, each as a hostile repository or model would
try it against a real daemon (``bonsai serve --stdio``) with a scripted provider.

Findings 6 (file modes) and 7 (socket paths) have their tests with the storage code.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from security_helpers import call, make_rig, raw_call

from bonsai.sim import Script
from bonsai.sim.faults import Fault
from bonsai.sim.script import Reply, Rule

OUTSIDE_TEXT = "OUTSIDE-SENTINEL the user's private notes\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text(OUTSIDE_TEXT)
    (folder / "target.txt").write_text(OUTSIDE_TEXT)
    return folder


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("old notes\n")
    return ws


def steps(*replies: Reply) -> Script:
    return Script(steps=[*replies, Reply(text="Done.")])


# ---------------------------------------------------------------- finding 1
async def test_a_planted_temporary_file_cannot_redirect_a_write(
    home: Path, workspace: Path, outside: Path
) -> None:
    # the names the old atomic write used for its temporary file, as committed symlinks
    for planted in (".notes.txt.bonsai-tmp", "notes.txt.bonsai-tmp", "notes.txt.tmp"):
        os.symlink(outside / "target.txt", workspace / planted)
    script = steps(
        Reply(tool_calls=[call("write_file", path="notes.txt", content="AGENT TEXT\n")]),
        Reply(
            tool_calls=[
                call("edit_file", path="notes.txt", old_string="AGENT", new_string="EDITED")
            ]
        ),
    )
    async with make_rig(script, home, workspace, policy="ask") as rig:
        sid = await rig.session()
        events = await rig.turn(sid, "update the notes")
    assert (outside / "target.txt").read_text() == OUTSIDE_TEXT, "the outside file is untouched"
    notes = workspace / "notes.txt"
    assert not notes.is_symlink() and notes.read_text() == "EDITED TEXT\n"
    assert [a["tool"] for a in rig.approvals] == ["write_file", "edit_file"]
    assert all("notes.txt" in a["diff"] and "target" not in a["diff"] for a in rig.approvals)
    assert [e["isError"] for e in rig.tool_results(events)] == [False, False]


async def test_an_edit_through_a_symlink_leading_out_is_refused(
    home: Path, workspace: Path, outside: Path
) -> None:
    os.symlink(outside / "target.txt", workspace / "link.txt")
    script = steps(
        Reply(
            tool_calls=[
                call("edit_file", path="link.txt", old_string="OUTSIDE", new_string="PWNED"),
                call("write_file", path="link.txt", content="PWNED"),
            ]
        )
    )
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        events = await rig.turn(sid, "edit the link")
        results = rig.tool_results(events)
        assert [r["isError"] for r in results] == [True, True]
        assert all("outside the workspace" in r["result"] for r in results)
        assert events[-1]["kind"] == "done", "a refusal is a tool result; the turn goes on"
        assert rig.leaks("OUTSIDE-SENTINEL") == []
    assert (outside / "target.txt").read_text() == OUTSIDE_TEXT


# ---------------------------------------------------------------- finding 2
async def test_grep_never_reads_through_a_symlink_leading_out(
    home: Path, workspace: Path, outside: Path
) -> None:
    os.symlink(outside / "secret.txt", workspace / "link")
    os.symlink(outside, workspace / "link_dir")
    (workspace / "inside.txt").write_text("an OUTSIDE-SENTINEL mention inside\n")
    os.symlink("inside.txt", workspace / "inside_link.txt")
    script = steps(
        Reply(tool_calls=[call("grep", pattern="OUTSIDE")]),
        Reply(tool_calls=[call("grep", pattern="OUTSIDE", path="link")]),
        Reply(tool_calls=[call("grep", pattern="OUTSIDE", path="link_dir")]),
    )
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        events = await rig.turn(sid, "search")
        whole, file_link, dir_link = (r["result"] for r in rig.tool_results(events))
        assert "inside.txt:1:" in whole and "inside_link.txt:1:" in whole
        assert "private notes" not in whole and "skipped 2 symbolic link(s)" in whole
        assert "outside the workspace" in file_link and "outside the workspace" in dir_link
        assert rig.leaks("private notes") == []


async def test_a_steering_file_linked_out_of_the_repository_is_not_read(
    home: Path, workspace: Path, outside: Path
) -> None:
    os.symlink(outside / "secret.txt", workspace / "AGENTS.md")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "rules.md").write_text("Use tabs.\n")
    os.symlink("docs/rules.md", workspace / "CLAUDE.md")  # inside: still read
    async with make_rig(steps(), home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, "hello")
        assert "Use tabs." in rig.requests_text()
        assert rig.leaks("private notes") == []


# ---------------------------------------------------------------- finding 3
async def test_glob_lists_nothing_outside_the_workspace(
    home: Path, workspace: Path, outside: Path, tmp_path: Path
) -> None:
    os.symlink(outside, workspace / "link_dir")
    script = steps(
        Reply(
            tool_calls=[
                call("glob", pattern="../*"),
                call("glob", pattern="../../**"),
                call("glob", pattern="link_dir/*"),
                call("glob", pattern=f"{tmp_path}/*"),
                call("glob", pattern="*", path="link_dir"),
                call("glob", pattern="**/*.txt"),
            ]
        )
    )
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        events = await rig.turn(sid, "list")
        up, up_up, via_link, absolute, base_link, txt = (
            r["result"] for r in rig.tool_results(events)
        )
        assert "'..'" in up and "'..'" in up_up and "absolute" in absolute
        assert "target.txt" not in via_link and "link_dir" in via_link
        assert "outside the workspace" in base_link
        assert txt.splitlines()[0] == "notes.txt" and "secret.txt" not in txt
        assert "skipped 1 symbolic link(s) leading outside the workspace: link_dir" in txt
        assert events[-1]["kind"] == "done"
        for name in ("secret.txt", "target.txt", "outside/"):
            assert name not in rig.requests_text()


# ---------------------------------------------------------------- finding 4
SECRETS = {
    "DB_PASSWORD": "hunter2-Db-Passw0rd",
    "aws_secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "json_password": "json-Passw0rd-value",
    "github_pat": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF",
    "pem_body": "MIIEowIBAAKCAQEA7bq2ZbKjRkWmEXAMPLEBODY",
    "daemon_key": "live-daemon-KEY-1234567890abcdef",
}


async def test_redaction_survives_line_numbers_prefixes_and_cut_key_blocks(
    home: Path, workspace: Path
) -> None:
    (workspace / ".env").write_text(f"DB_PASSWORD={SECRETS['DB_PASSWORD']}\n")
    (workspace / "credentials").write_text(
        f"[default]\naws_secret_access_key = {SECRETS['aws_secret']}\n"
    )
    (workspace / "config.json").write_text(
        f'{{"user": "me", "password": "{SECRETS["json_password"]}"}}\n'
    )
    (workspace / "token.txt").write_text(f"token {SECRETS['github_pat']}\n")
    (workspace / "id_rsa").write_text(
        f"-----BEGIN RSA PRIVATE KEY-----\n{SECRETS['pem_body']}\n{'A' * 64}\n"
        "-----END RSA PRIVATE KEY-----\n"
    )
    script = steps(
        Reply(
            tool_calls=[
                call("read_file", path=".env"),
                call("read_file", path="credentials"),
                call("read_file", path="config.json"),
                call("read_file", path="token.txt"),
                call("read_file", path="id_rsa", limit=2),  # no END line in view
                call("grep", pattern="PASSWORD|aws_secret|password|github_pat|MIIE"),
                call("bash", command="printenv OPENAI_API_KEY; echo exit-$?"),
            ]
        )
    )
    # a provider key that does not look like one (no sk- prefix)
    env = {"BONSAI_PROVIDER": "openai", "OPENAI_API_KEY": SECRETS["daemon_key"]}
    async with make_rig(script, home, workspace, **env) as rig:
        rig.sim.set_script(script)
        sid = await rig.session()
        events = await rig.turn(sid, "show me the config")
        results = rig.tool_results(events)
        assert len(results) == 7 and events[-1]["kind"] == "done"
        assert "[REDACTED]" in results[0]["result"] and "DB_PASSWORD=" in results[0]["result"]
        assert "exit-1" in results[6]["result"], "the key is not in the tool's environment"
        for name, secret in SECRETS.items():
            assert rig.leaks(secret) == [], name


# ---------------------------------------------------------------- finding 5
async def test_a_provider_error_inside_the_stream_is_redacted(home: Path, workspace: Path) -> None:
    key = "plain-provider-key-0123456789"
    fault = Fault(
        kind="stream_error",
        after_events=2,
        message="upstream failed for key {api_key} (token sk-proj-abcdefghijklmnopqrstuvwx)",
    )
    script = Script(steps=[Reply(text="partial words here")], rules=[Rule(match="", fault=fault)])
    env = {"BONSAI_PROVIDER": "openai", "OPENAI_API_KEY": key}
    async with make_rig(script, home, workspace, **env) as rig:
        sid = await rig.session()
        events = await rig.turn(sid, "hello")
        [error] = [e for e in events if e["kind"] == "error"]
        assert "mid-stream" in error["message"] and "[REDACTED]" in error["message"]
        assert rig.leaks(key) == [] and rig.leaks("sk-proj-abcdefghijklmnop") == []


# ---------------------------------------------------------------- finding 8
async def test_bad_tool_arguments_are_tool_errors_and_the_turn_goes_on(
    home: Path, workspace: Path
) -> None:
    script = steps(
        Reply(
            tool_calls=[
                raw_call("read_file", '{"path": "notes\\u0000.txt"}'),
                raw_call("write_file", '{"path": "x\\u0000y", "content": "z"}'),
                call("read_file", path="a" * 5000),
                call("write_file", path="/".join(["d" * 200] * 30), content="z"),
                call("glob", pattern="/etc/*"),
                call("read_file", path=12),
                call("grep", pattern="(unclosed"),
                call("list_dir", path="notes.txt/"),
            ]
        )
    )
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        events = await rig.turn(sid, "try odd arguments")
        results = rig.tool_results(events)
        assert events[-1]["kind"] == "done", events[-1]
        assert len(results) == 8 and all(r["isError"] for r in results)
        nul_read, nul_write, long_read, long_write, glob_abs, wrong_type, regex, not_dir = (
            r["result"] for r in results
        )
        assert "'path'" in nul_read and "NUL" in nul_read and "NUL" in nul_write
        assert "'path'" in long_read and "limit" in long_read and "limit" in long_write
        assert "'pattern'" in glob_abs and "absolute" in glob_abs
        assert "'path'" in wrong_type and "invalid regular expression" in regex
        assert "not a directory" in not_dir
        assert "version" in await rig.status()
    assert sorted(p.name for p in workspace.iterdir()) == ["notes.txt"]
