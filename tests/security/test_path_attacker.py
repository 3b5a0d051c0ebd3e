"""A path attacker over every file tool: hypothesis mixes ``..``, absolute paths,
symlinks (inside→outside, chains, dangling, swapped between check and use by a
racing thread), hard links to outside files, NUL bytes, very long names and
unicode look-alikes. After every sequence the sentinel tree outside the
workspace is byte-for-byte unchanged and no outside byte is in any tool result.

Most sequences drive the tool functions in process (fast, many examples); one
fixed sequence goes through a real daemon and checks the provider's requests,
the stored rows and that the daemon still answers."""

from __future__ import annotations

import asyncio
import hashlib
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from security_helpers import call, make_rig

from bonsai.agent.tools import files, search
from bonsai.agent.tools.base import Tool, ToolContext, ToolFailure
from bonsai.settings import Settings
from bonsai.sim import Script
from bonsai.sim.script import Reply

SENTINEL = "OUTSIDE-SENTINEL-7f3a"
TOOLS: dict[str, Tool] = {t.name: t for t in [*files.TOOLS, *search.TOOLS]}


def make_tree(root: Path) -> tuple[Path, Path]:
    outside, ws = root / "outside", root / "ws"
    (outside / "deep").mkdir(parents=True)
    for i, rel in enumerate(("secret.txt", "deep/key.pem", "notes.txt")):
        (outside / rel).write_text(f"{SENTINEL} {i} private\n")
    (ws / "src").mkdir(parents=True)
    (ws / "notes.txt").write_text("inside notes\n")
    (ws / "src" / "app.py").write_text("print('inside')\n")
    return outside, ws


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode())
        if path.is_symlink():
            digest.update(b"L" + os.readlink(path).encode())
        elif path.is_file():
            digest.update(b"F" + path.read_bytes())
    return digest.hexdigest()


# ---------------------------------------------------------------- strategies
NAMES = st.sampled_from(
    ["notes.txt", "src/app.py", "link", "src/link2", "chain", "race", "new.txt"]
)
LOOKALIKES = st.sampled_from(
    [
        "ｎotes.txt",
        "notes\u2024txt",
        "..\u2215outside\u2215secret.txt",
        "\u202enotes.txt",
        "src\u2044app.py",
    ]
)


def attack_paths(outside: str) -> st.SearchStrategy[str]:
    return st.one_of(
        NAMES,
        LOOKALIKES,
        st.sampled_from(
            [
                "../outside/secret.txt",
                "src/../../outside/secret.txt",
                "link/../outside/notes.txt",
                f"{outside}/secret.txt",
                f"{outside}/deep/key.pem",
                "~/secret.txt",
                "./././../outside",
                "/",
                ".",
                "",
                "src/app.py\0.txt",
                "x" * 300,
                "/".join(["d" * 250] * 20),
                "link/secret.txt",
                "chain/key.pem",
                "dangling",
            ]
        ),
        st.lists(
            st.sampled_from(["..", ".", "src", "link", "outside", "secret.txt"]), max_size=6
        ).map("/".join),
    )


def link_targets(outside: str) -> st.SearchStrategy[str]:
    return st.sampled_from(
        [
            f"{outside}/secret.txt",
            f"{outside}/deep",
            "../outside/secret.txt",
            "../../outside/deep/key.pem",
            "chain",  # a chain through another link
            "link",
            "notes.txt",  # inside: allowed
            "src",
            "nowhere/at/all",  # dangling
            "/proc/self/cwd",
        ]
    )


def operations(outside: str) -> st.SearchStrategy[list[tuple[Any, ...]]]:
    path = attack_paths(outside)
    tool_op = st.one_of(
        st.tuples(st.just("read_file"), path),
        st.tuples(st.just("list_dir"), path),
        st.tuples(st.just("write_file"), path),
        st.tuples(st.just("edit_file"), path),
        st.tuples(st.just("grep"), path),
        st.tuples(
            st.just("glob"),
            st.sampled_from(
                ["*", "**/*", "../*", "../../**", "link/*", "chain/**", f"{outside}/*", "**/*.pem"]
            ),
        ),
    )
    plant = st.one_of(
        st.tuples(
            st.just("symlink"),
            st.sampled_from(
                ["link", "src/link2", "chain", "dangling", "notes.txt", ".notes.txt.bonsai-tmp"]
            ),
            link_targets(outside),
        ),
        st.tuples(
            st.just("hardlink"),
            st.sampled_from(["hard.txt", "src/hard.py"]),
            st.sampled_from(["secret.txt", "deep/key.pem"]),
        ),
        st.tuples(
            st.just("race"),
            st.sampled_from(["read_file", "write_file", "edit_file", "grep", "list_dir"]),
        ),
    )
    return st.lists(st.one_of(tool_op, plant), min_size=1, max_size=8)


# ---------------------------------------------------------------- running them
def args_for(tool: str, path: str) -> dict[str, Any]:
    if tool in ("grep", "list_dir"):
        return (
            {"pattern": "SENTINEL|inside|private", "path": path}
            if tool == "grep"
            else {"path": path}
        )
    if tool == "glob":
        return {"pattern": path}
    if tool == "write_file":
        return {"path": path, "content": "agent text\n"}
    if tool == "edit_file":
        return {"path": path, "old_string": "i", "new_string": "I", "replace_all": True}
    return {"path": path}


def run_tool(ctx: ToolContext, tool: str, args: dict[str, Any]) -> str:
    """The tool's result text, or its refusal; anything but ToolFailure is a bug."""

    async def go() -> str:
        return (await TOOLS[tool].run(ctx, args)).content

    try:
        return asyncio.run(go())
    except ToolFailure as failure:
        return str(failure)


def plant(ws: Path, outside: Path, op: tuple[Any, ...]) -> None:
    kind, name, target = op
    where = ws / name
    where.parent.mkdir(parents=True, exist_ok=True)
    if where.is_symlink() or where.exists():
        if where.is_dir() and not where.is_symlink():
            return
        where.unlink()
    if kind == "symlink":
        os.symlink(target, where)
    else:
        os.link(outside / target, where)


def race(ctx: ToolContext, ws: Path, outside: Path, tool: str) -> str:
    """Run ``tool`` on ``race`` while a thread keeps swapping it between an inside
    file and a symlink to an outside one (bounded: it stops when the tool returns)."""
    where = ws / "race"
    where.unlink(missing_ok=True)  # never write through what an earlier race left
    where.write_text("inside race\n")
    done = threading.Event()

    def swapper() -> None:
        spare = ws / ".race-swap"
        for i in range(3_000):
            if done.is_set():
                return
            try:
                spare.unlink(missing_ok=True)
                if i % 2:
                    os.symlink(outside / "secret.txt", spare)
                else:
                    spare.write_text("inside race\n")
                os.replace(spare, where)
            except OSError:
                pass

    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    try:
        return "\n".join(run_tool(ctx, tool, args_for(tool, "race")) for _ in range(3))
    finally:
        done.set()
        thread.join(timeout=10)


OUTSIDE_PLACEHOLDER = "/tmp/bonsai-attacker-outside"  # the fresh tree's path, per example


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations(OUTSIDE_PLACEHOLDER))
def test_no_tool_sequence_reads_or_writes_outside(ops: list[tuple[Any, ...]]) -> None:
    def check(text: str) -> None:
        assert SENTINEL not in text, f"an outside byte reached a tool result: {text[:300]}"

    run_sequence_at(ops, check)


def run_sequence_at(ops: list[tuple[Any, ...]], check: Callable[[str], None]) -> None:
    """Run ``ops`` on a fresh tree (the placeholder path resolved to its outside
    folder), calling ``check`` on every result; the outside tree must not change."""
    with tempfile.TemporaryDirectory() as tmp:
        outside, ws = make_tree(Path(tmp))
        before = tree_digest(outside)
        ctx = ToolContext(workspace=ws, session_id="s", turn_id="t", settings=Settings())
        for op in ops:
            op = tuple(_retarget(x, outside) for x in op)
            if op[0] in ("symlink", "hardlink"):
                plant(ws, outside, op)
                continue
            if op[0] == "race":
                text = race(ctx, ws, outside, op[1])
            else:
                text = run_tool(ctx, op[0], args_for(op[0], op[1]))
            check(text)
        assert tree_digest(outside) == before, f"the outside tree changed after {ops}"


def _retarget(value: Any, outside: Path) -> Any:
    if not isinstance(value, str):
        return value
    return value.replace(OUTSIDE_PLACEHOLDER, str(outside))


# ---------------------------------------------------------------- through the daemon
async def test_one_attack_sequence_through_the_daemon(home: Path, tmp_path: Path) -> None:
    outside, ws = make_tree(tmp_path)
    before = tree_digest(outside)
    os.symlink(outside / "secret.txt", ws / "link")
    os.symlink("link", ws / "chain")
    os.symlink(outside / "deep", ws / "src" / "deep_link")
    os.link(outside / "notes.txt", ws / "hard.txt")
    os.symlink(".notes.txt.bonsai-tmp-target", ws / ".notes.txt.bonsai-tmp")
    attacks = [
        call("read_file", path="link"),
        call("read_file", path="chain"),
        call("read_file", path="hard.txt"),
        call("read_file", path=f"{outside}/secret.txt"),
        call("read_file", path="src/deep_link/key.pem"),
        call("list_dir", path="src/deep_link"),
        call("list_dir", path="src"),
        call("grep", pattern="SENTINEL"),
        call("glob", pattern="**/*"),
        call("glob", pattern="src/deep_link/*"),
        call("edit_file", path="chain", old_string="private", new_string="public"),
        call("write_file", path="link", content="overwritten"),
        call("write_file", path="hard.txt", content="replaced, not written through"),
        call("write_file", path="../outside/new.txt", content="escaped"),
    ]
    script = Script(steps=[Reply(tool_calls=attacks), Reply(text="Done.")])
    async with make_rig(script, home, ws) as rig:
        sid = await rig.session()
        events = await rig.turn(sid, "attack")
        assert events[-1]["kind"] == "done"
        assert len(rig.tool_results(events)) == len(attacks)
        assert rig.leaks(SENTINEL) == []
        assert "version" in await rig.status()
    assert tree_digest(outside) == before
    assert (ws / "hard.txt").read_text() == "replaced, not written through"
