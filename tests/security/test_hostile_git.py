"""A hostile repository's git state, opened by a real daemon (``bonsai serve --stdio``).

bonsai runs ``git status`` on every turn (the volatile tail) and hashes the
changed entries at a session's start (the baseline). A repository that arrives
with its own ``.git`` (an archive, a shared folder) can name programs in its
config that plain ``git status`` runs, and can plant entries whose bytes never
end. Opening such a workspace must run nothing and must not hang.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from security_helpers import make_rig

from bonsai.services.project_context.git import GitError, read_status, take_baseline
from bonsai.services.project_context.volatile import git_lines
from bonsai.sim import Script
from bonsai.sim.script import Reply

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def committed_repo(path: Path, branch: str, name: str, text: str) -> Path:
    """A new repository at ``path`` on ``branch`` with one committed file."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", branch, ".")
    (path / name).write_text(text)
    git(path, "add", name)
    git(path, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "init")
    return path


def plain_git_status(cwd: Path, *args: str) -> str:
    """What git itself says here, with nothing neutralised (the rig's check)."""
    done = subprocess.run(
        ["git", "status", "--porcelain", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout


def hostile_repo(root: Path, marker: Path) -> Path:
    """A repository whose config runs ``touch marker`` from ``git status``: as the
    fsmonitor hook, and as the clean filter of every tracked ``.py`` file."""
    ws = root / "ws"
    ws.mkdir()
    git(ws, "init", "-q", ".")
    (ws / "app.py").write_text("print('hi')\n")
    (ws / ".gitattributes").write_text("*.py filter=evil\n")
    git(ws, "add", "app.py", ".gitattributes")
    git(ws, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "init")
    git(ws, "config", "core.fsmonitor", f"touch {marker}; false #")
    git(ws, "config", "filter.evil.clean", f"touch {marker}; cat")
    git(ws, "config", "filter.evil.required", "true")
    # the index's stat data no longer matches: git must hash app.py (through the filter)
    stamp = os.stat(ws / "app.py").st_mtime_ns + 5_000_000_000
    os.utime(ws / "app.py", ns=(stamp, stamp))
    return ws


def test_plain_git_status_would_run_the_planted_programs(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    ws = hostile_repo(tmp_path, marker)
    subprocess.run(["git", "status", "--porcelain"], cwd=ws, capture_output=True, check=False)
    assert marker.exists(), "the rig is real: git itself runs what the config names"


def test_status_and_baseline_run_nothing_the_repository_names(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    ws = hostile_repo(tmp_path, marker)
    status = read_status(ws)
    baseline = take_baseline(ws)
    assert not marker.exists(), "neither the fsmonitor hook nor the filter ran"
    assert status.branch is not None and status.head is not None
    assert baseline.note == "" and baseline.head == status.head


def test_a_link_to_a_pipe_or_a_device_is_hashed_as_a_link(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q", ".")
    os.mkfifo(tmp_path / "pipe")
    os.symlink(tmp_path / "pipe", ws / "to_pipe")
    os.symlink("/dev/zero", ws / "to_zero")
    os.mkfifo(ws / "fifo")
    (ws / "real.txt").write_text("text\n")
    os.symlink("real.txt", ws / "to_real")
    baseline = take_baseline(ws)  # reading the pipe would block, /dev/zero never ends
    assert set(baseline.changes) >= {"to_pipe", "to_zero", "to_real", "real.txt"}
    assert baseline.changes["to_real"] != baseline.changes["real.txt"], "the link, not its target"
    assert baseline.unchanged(ws, "to_pipe") and baseline.unchanged(ws, "to_zero")
    os.remove(ws / "to_real")
    os.symlink("elsewhere.txt", ws / "to_real")
    assert not baseline.unchanged(ws, "to_real"), "a retargeted link is a change"


async def test_a_turn_in_a_hostile_repository_runs_nothing_and_finishes(
    home: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "PWNED"
    ws = hostile_repo(tmp_path, marker)
    os.mkfifo(tmp_path / "pipe")
    os.symlink(tmp_path / "pipe", ws / "to_pipe")
    async with make_rig(Script(steps=[Reply(text="Looked.")]), home, ws) as rig:
        sid = await rig.session()
        events = await rig.turn(sid, "what is in this repository?", timeout=60)
        assert events[-1]["kind"] == "done", events[-1]
        tail = rig.requests_text()
        assert "to_pipe" in tail, "the planted link is listed in the volatile tail"
    assert not marker.exists(), "opening the repository ran none of its programs"


def logged_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``git`` first on PATH: a wrapper that logs each call's subcommand (past the
    ``-c`` and ``--`` options), then runs git."""
    real = shutil.which("git")
    bin_dir, log = tmp_path / "bin", tmp_path / "git.log"
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do case "$a" in -c) skip=1;; --*) ;; *) if [ -z "$skip" ]; then '
        f'echo "$a" >> {log}; break; fi; skip=;; esac; done\n'
        f'exec {real} "$@"\n'
    )
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return log


def test_a_filter_driver_added_between_two_turns_is_still_neutralised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "PWNED"
    ws = hostile_repo(tmp_path, marker)
    config = ws / ".git" / "config"
    # the first turn sees a harmless driver of the same name length
    evil = config.read_text()
    config.write_text(evil.replace('"evil"', '"good"'))
    log = logged_git(tmp_path, monkeypatch)
    read_status(ws)
    read_status(ws)
    assert log.read_text().split() == ["config", "status", "status"], "config read once"
    # same size, same mtime: only the bytes tell the driver the attributes name arrived
    before = os.stat(config)
    config.write_text(evil)
    assert os.stat(config).st_size == before.st_size
    os.utime(config, ns=(before.st_atime_ns, before.st_mtime_ns))
    stamp = os.stat(ws / "app.py").st_mtime_ns + 5_000_000_000
    os.utime(ws / "app.py", ns=(stamp, stamp))
    read_status(ws)
    assert not marker.exists(), "the filter named after the first turn did not run"
    assert log.read_text().split()[-2:] == ["config", "status"]


def test_a_config_that_includes_others_is_read_on_every_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "PWNED"
    ws = hostile_repo(tmp_path, marker)
    included = tmp_path / "later.gitconfig"  # does not exist yet: nothing to key on
    git(ws, "config", "include.path", str(included))
    git(ws, "config", "--remove-section", "filter.evil")
    log = logged_git(tmp_path, monkeypatch)
    read_status(ws)
    included.write_text(f'[filter "evil"]\n\tclean = touch {marker}; cat\n')
    stamp = os.stat(ws / "app.py").st_mtime_ns + 9_000_000_000
    os.utime(ws / "app.py", ns=(stamp, stamp))
    read_status(ws)
    assert not marker.exists(), "the included file's filter did not run"
    assert log.read_text().split() == ["config", "status", "config", "status"]


async def test_a_driver_planted_between_two_turns_of_a_daemon_does_not_run(
    home: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "PWNED"
    ws = hostile_repo(tmp_path, marker)
    config = ws / ".git" / "config"
    evil = config.read_text()
    config.write_text(evil.replace('"evil"', '"good"'))  # turn one: a driver nothing uses
    script = Script(steps=[Reply(text="Looked."), Reply(text="Looked again.")])
    async with make_rig(script, home, ws) as rig:
        sid = await rig.session()
        assert (await rig.turn(sid, "what is here?"))[-1]["kind"] == "done"
        before = os.stat(config)
        config.write_text(evil)  # same size, same mtime: the driver .gitattributes names
        os.utime(config, ns=(before.st_atime_ns, before.st_mtime_ns))
        stamp = os.stat(ws / "app.py").st_mtime_ns + 7_000_000_000
        os.utime(ws / "app.py", ns=(stamp, stamp))
        assert (await rig.turn(sid, "and now?"))[-1]["kind"] == "done"
    assert not marker.exists(), "the filter planted between the turns did not run"


def test_a_planted_work_tree_does_not_list_another_folder(tmp_path: Path) -> None:
    """``core.worktree`` in the repository's config points git at any folder (the
    user's home, ``/``): plain ``git status`` walks it and lists its untracked
    names (``.ssh/id_rsa``), which the volatile tail sends to the provider."""
    elsewhere = tmp_path / "home"
    (elsewhere / ".ssh").mkdir(parents=True)
    (elsewhere / ".ssh" / "id_rsa").write_text("private\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q", ".")
    (ws / "app.py").write_text("print('hi')\n")
    git(ws, "add", "app.py")
    git(ws, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "init")
    (ws / "new.py").write_text("print('new')\n")
    git(ws, "config", "core.worktree", str(elsewhere))
    plain = plain_git_status(ws, "--untracked-files=all")
    assert ".ssh/id_rsa" in plain, "the rig is real: git walks the planted folder"
    status = read_status(ws)
    assert status.entries == [("??", "new.py")], "the workspace's own state, nothing else"
    assert take_baseline(ws).changes.keys() == {"new.py"}


def _secret_repo(tmp_path: Path) -> Path:
    """The user's other repository, whose branch and paths must not reach the model."""
    return committed_repo(tmp_path / "secret", "payroll-2027", "salaries.csv", "alice,1\n")


@pytest.mark.parametrize("how", ["absolute", "relative", "link"])
def test_a_git_file_naming_another_repository_is_refused(tmp_path: Path, how: str) -> None:
    """A workspace that arrives with a ``.git`` file (``gitdir: ../secret/.git``) or a
    ``.git`` link makes plain git describe the other repository: its branch, head and
    every tracked path (shown as deleted) would go into the volatile tail."""
    secret = _secret_repo(tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("print('hi')\n")
    if how == "link":
        (ws / ".git").symlink_to(secret / ".git")
    else:
        named = secret / ".git" if how == "absolute" else Path("../secret/.git")
        (ws / ".git").write_text(f"gitdir: {named}\n")
    plain = plain_git_status(ws, "--branch")
    assert "payroll-2027" in plain, "the rig is real: git reads the other repository"
    with pytest.raises(GitError, match="outside the workspace"):
        read_status(ws)
    baseline = take_baseline(ws)
    assert "outside the workspace" in baseline.note and not baseline.changes
    assert baseline.branch is None
    told = " ".join(git_lines(ws, None))
    assert "payroll" not in told and "salaries" not in told and "outside the workspace" in told


def test_a_real_worktree_and_a_real_submodule_still_show_their_state(tmp_path: Path) -> None:
    main = _secret_repo(tmp_path)
    tree = tmp_path / "trees" / "feature"
    git(main, "worktree", "add", "-q", "-b", "feature-x", str(tree))
    (tree / "new.py").write_text("x = 1\n")
    status = read_status(tree)
    assert status.branch == "feature-x" and ("??", "new.py") in status.entries

    sub_src = committed_repo(tmp_path / "lib", "lib-main", "lib.py", "y = 2\n")
    git(main, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub_src), "vendor")
    sub = main / "vendor"
    assert (sub / ".git").is_file(), "a real submodule: its .git is a gitdir file"
    (sub / "extra.py").write_text("z = 3\n")
    status = read_status(sub)
    assert status.branch == "lib-main" and ("??", "extra.py") in status.entries
