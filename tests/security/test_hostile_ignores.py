"""A ``.gitignore`` that holds the daemon: pathspec turns ``*a*a*a*a*a*b`` into
``[^/]*a[^/]*a…`` for ``re``, and the repository map asks it of every path. Over one
file named with 200 a's ``re`` backtracks for minutes, holding the GIL, so the
daemon's event loop (the map builds in a thread beside it) answered no one.
The real ignore rules of the map's walk, asked from a thread."""

from __future__ import annotations

import threading
from pathlib import Path

from bonsai.services.repomap.discovery import IgnoreRules, discover


def test_a_backtracking_gitignore_pattern_answers_at_once_and_still_ignores(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".gitignore").write_text("*a*a*a*a*a*b\nbuild/\n")
    (root / ("a" * 200)).write_text("x = 1\n")
    (root / "src").mkdir()
    (root / "src" / "xaaaaab").write_text("y = 2\n")  # matches: ignored
    (root / "main.py").write_text("z = 3\n")
    rules = IgnoreRules(root)
    answers: list[bool] = []
    ticks: list[int] = []
    worker = threading.Thread(target=lambda: answers.append(rules.excluded("a" * 200)), daemon=True)
    worker.start()
    while worker.is_alive() and len(ticks) < 200:  # this thread runs while it asks
        worker.join(0.05)
        ticks.append(1)
    assert answers == [False], "answered within 10 s (it took minutes)"
    assert rules.excluded("src/xaaaaab") and not rules.excluded("main.py")
    assert rules.excluded("build", is_dir=True)
    found = {c.path for c in discover(rules).files}
    assert "main.py" in found and "src/xaaaaab" not in found
