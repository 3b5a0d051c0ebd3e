"""The walk checks each entry against the ``.gitignore`` specs passed down to its
directory (each loaded once); ``excluded()`` looks every ancestor up per path.
Both must give the same answer, on generated trees of nested ``.gitignore``
files (negations, directory-only and anchored patterns, deeper files overriding
shallower ones), for the whole walk and for a walk of a subdirectory."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bonsai.services.repomap.discovery import IgnoreRules, discover

NAMES = ("a", "b", "src", "gen", "x.py", "y.log", "z.txt")
DIRS = ("", "a", "b", "a/b", "src", "src/gen", "a/b/src")
PATTERNS = st.sampled_from(
    (
        "*.log",
        "!*.log",
        "y.log",
        "!y.log",
        "x.py",
        "!x.py",
        "/x.py",
        "gen/",
        "!gen/",
        "gen",
        "/src",
        "src/",
        "b/",
        "!b",
        "a/b/",
        "**/gen/*.py",
        "!gen/x.py",
        "*.txt",
        "!z.txt",
        "b/*.py",
        "/a/b/x.py",
        "**/z.txt",
        "src/**",
        "#x.py",
        "",
    )
)
TREES = st.fixed_dictionaries(
    {
        "files": st.sets(
            st.tuples(st.sampled_from(DIRS), st.sampled_from(("x.py", "y.log", "z.txt"))),
            min_size=1,
        ),
        "ignores": st.dictionaries(
            st.sampled_from(DIRS), st.lists(PATTERNS, max_size=5), max_size=4
        ),
    }
)


def _write(root: Path, tree: dict) -> list[str]:
    made: list[str] = []
    for base, name in sorted(tree["files"]):
        rel = f"{base}/{name}" if base else name
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x = 1\n")
        made.append(rel)
    for base, lines in tree["ignores"].items():
        rel = f"{base}/.gitignore" if base else ".gitignore"
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("\n".join(lines) + "\n")
        made.append(rel)
    return sorted(made)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TREES, st.sampled_from(DIRS))
def test_the_walk_equals_the_per_path_answer(tree: dict, under: str) -> None:
    root = Path(tempfile.mkdtemp(prefix="bonsai-chain-"))
    try:
        made = _write(root, tree)
        expected = [rel for rel in made if not IgnoreRules(root, set()).excluded(rel)]
        assert [c.path for c in discover(IgnoreRules(root, set())).files] == expected
        if (root / under).is_dir():
            inside = [rel for rel in expected if not under or rel.startswith(under + "/")]
            fresh = IgnoreRules(root, set())  # its first spec loads come from the walk
            assert [c.path for c in discover(fresh, under).files] == inside
    finally:
        shutil.rmtree(root)


def test_a_deeper_gitignore_overrides_a_shallower_one_both_ways(tmp_path: Path) -> None:
    files = {
        ".gitignore": "*.log\n!keep.py\n",
        "a/.gitignore": "!*.log\n*.py\n",
        "a/b/.gitignore": "*.log\n!x.py\n",
        "one.log": "",
        "keep.py": "",
        "a/one.log": "",
        "a/x.py": "",
        "a/b/one.log": "",
        "a/b/x.py": "",
        "a/b/c/x.py": "",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    found = [c.path for c in discover(IgnoreRules(tmp_path, set())).files]
    assert found == [
        ".gitignore",
        "a/.gitignore",
        "a/b/.gitignore",
        "a/b/c/x.py",  # a/b's !x.py matches below it too
        "a/b/x.py",
        "a/one.log",
        "keep.py",
    ]
