"""Helpers for the repository-map tests (a uniquely named module, not conftest):
a deterministic synthetic Python repository and a chars/4 token counter."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hypothesis import strategies as st

from bonsai.services.repomap import RepoMapService
from bonsai.services.repomap.records import Definition, FileTags

FIXTURES = Path(__file__).parent / "fixtures"


def chars4(text: str) -> int:
    return (len(text) + 3) // 4


def module_source(k: int, n: int) -> str:
    """Module k: a class and three functions, calling into two other modules and
    into the shared ``core`` module."""
    a, b = (k * 7 + 1) % n, (k * 3 + 2) % n
    return (
        "from pkg.core import core_helper, CoreConfig\n"
        f"from pkg.mod_{a:03d} import function_{a:03d}_one\n"
        f"from pkg.mod_{b:03d} import Widget{b:03d}\n\n\n"
        f"class Widget{k:03d}:\n"
        f"    def render_{k:03d}(self, config: CoreConfig) -> str:\n"
        f"        return core_helper(function_{a:03d}_one(config))\n\n\n"
        f"def function_{k:03d}_one(value):\n"
        f"    return Widget{b:03d}().render_{b:03d}(value)\n\n\n"
        f"def function_{k:03d}_two(value, other):\n"
        "    return core_helper(value) + core_helper(other)\n\n\n"
        f"def function_{k:03d}_three():\n"
        "    return CoreConfig()\n"
    )


CORE = (
    "class CoreConfig:\n"
    "    def load_settings(self, path: str) -> dict:\n"
    "        return {}\n\n\n"
    "def core_helper(value):\n"
    "    return value\n"
)

LEAF = (
    "def obscure_checksum_routine(data: bytes) -> int:\n"
    "    return sum(data) % 251\n\n\n"
    "class LeafOnlyThing:\n"
    "    pass\n"
)


def write_repo(root: Path, modules: int = 60) -> Path:
    pkg = root / "pkg"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "core.py").write_text(CORE)
    for k in range(modules):
        (pkg / f"mod_{k:03d}.py").write_text(module_source(k, modules))
    (root / "tools").mkdir(exist_ok=True)
    (root / "tools" / "leaf_utility.py").write_text(LEAF)
    (root / "README.md").write_text("# demo\n")
    return root


ServiceFactory = Callable[..., RepoMapService]


# -- random edit sequences over five small modules (the incremental-update property tests)
PARTS = ["cart", "total", "parse", "header", "default", "browser", "item", "count"]
FILES = [f"pkg/mod_{k}.py" for k in range(5)]
NAME = st.lists(st.sampled_from(PARTS), min_size=1, max_size=2).map("_".join)
# a function added to a file, or its last one dropped
NAME_EDITS = (
    st.tuples(st.just("add"), st.sampled_from(FILES), NAME),
    st.tuples(st.just("drop"), st.sampled_from(FILES), st.just("")),
)


def numbered_tags(defs_per_file: list[list[int]]) -> dict[str, FileTags]:
    """Files ``m00.py``… each defining ``name_N`` for its numbers and referring to
    three names of the nine, the small graphs the rank property tests draw."""
    tags = {}
    for k, names in enumerate(defs_per_file):
        path = f"m{k:02d}.py"
        definitions = tuple(
            Definition(f"name_{n}", "function", line + 1, f"def name_{n}():", 0)
            for line, n in enumerate(sorted(set(names)))
        )
        refs = {f"name_{(k + j) % 9}": 1 + j for j in range(3)}
        tags[path] = FileTags(path, "python", definitions, refs, ())
    return tags
