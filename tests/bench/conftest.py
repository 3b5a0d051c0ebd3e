"""The bench scripts importable by name from these tests (``from open_loop import ...``)
without putting ``bench/`` on the import path: there, ``bench/episodes.py`` would
shadow the tests' own ``episodes`` helpers (a namespace package loses to any plain
module of its name) for every test file collected after these."""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench"


class BenchScripts(importlib.abc.MetaPathFinder):
    """Finds a top-level module in ``bench/`` once the normal finders found nothing."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        script = BENCH / f"{fullname}.py"
        if path is not None or not script.is_file():
            return None
        return importlib.util.spec_from_file_location(fullname, script)


if not any(isinstance(finder, BenchScripts) for finder in sys.meta_path):
    sys.meta_path.append(BenchScripts())
