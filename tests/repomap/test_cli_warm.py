"""A warm repeat of `bonsai repomap` gives the same bytes without ranking or loading
the tokenizer; any change to the files or the inputs renders afresh."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

CODE = """
import json, sys
from bonsai.cli.main import main
code = main(sys.argv[1:])
heavy = ("tiktoken", "numpy", "pydantic", "bonsai.services.repomap.service")
print(json.dumps({m: m in sys.modules for m in heavy}), file=sys.stderr)
sys.exit(code)
"""


def _run_loaded(repo: Path, home: Path, *extra: str) -> tuple[dict, dict[str, bool]]:
    env = {**os.environ, "BONSAI_HOME": str(home)}
    argv = ["repomap", str(repo), "--json", "--tokens", "400", *extra]
    done = subprocess.run(
        [sys.executable, "-c", CODE, *argv], capture_output=True, text=True, env=env, check=True
    )
    return json.loads(done.stdout), json.loads(done.stderr.strip().splitlines()[-1])


def _run(repo: Path, home: Path, *extra: str) -> tuple[dict, bool]:
    out, loaded = _run_loaded(repo, home, *extra)
    return out, loaded["tiktoken"]


def test_a_warm_repeat_is_served_without_the_tokenizer(repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    first, loaded_first = _run(repo, home, "--mention", "Widget005")
    again, loaded_again = _run(repo, home, "--mention", "Widget005")
    assert loaded_first and not loaded_again
    assert (first["cached"], again["cached"]) == (False, True)
    assert again["text"] == first["text"] and again["tokens"] == first["tokens"]
    assert again["files"] == first["files"]

    other, loaded_other = _run(repo, home, "--mention", "Widget007")  # other inputs
    assert loaded_other and other["cached"] is False

    target = repo / "pkg" / "mod_005.py"
    target.write_text(target.read_text() + "\n\ndef brand_new_helper():\n    return 5\n")
    edited, loaded_edited = _run(repo, home, "--mention", "Widget005")  # files changed
    assert loaded_edited and edited["cached"] is False


def test_a_warm_repeat_imports_neither_numpy_nor_pydantic(repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    first, loaded_first = _run_loaded(repo, home, "--chat", "pkg/core.py")
    again, loaded_again = _run_loaded(repo, home, "--chat", str(repo / "pkg" / "core.py"))
    assert all(loaded_first.values())  # the first run renders: everything is loaded
    assert not any(loaded_again.values()), loaded_again
    assert again["cached"] and again["text"] == first["text"] and again["files"] == first["files"]

    (repo / "pkg" / "brand_new.py").write_text("def brand_new_helper():\n    return 5\n")
    fresh, loaded_fresh = _run_loaded(repo, home, "--chat", "pkg/core.py")  # a new file
    assert loaded_fresh["bonsai.services.repomap.service"] and fresh["cached"] is False


def test_the_memo_knows_the_default_discovery_settings() -> None:
    from bonsai.services.repomap import memo
    from bonsai.settings import RepoMapSettings

    defaults = RepoMapSettings()
    assert defaults.max_file_bytes == memo.DEFAULT_MAX_FILE_BYTES
    assert defaults.extra_exclude_dirs == []
