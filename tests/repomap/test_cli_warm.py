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
print(json.dumps({"tiktoken": "tiktoken" in sys.modules}), file=sys.stderr)
sys.exit(code)
"""


def _run(repo: Path, home: Path, *extra: str) -> tuple[dict, bool]:
    env = {**os.environ, "BONSAI_HOME": str(home)}
    argv = ["repomap", str(repo), "--json", "--tokens", "400", *extra]
    done = subprocess.run(
        [sys.executable, "-c", CODE, *argv], capture_output=True, text=True, env=env, check=True
    )
    loaded = json.loads(done.stderr.strip().splitlines()[-1])["tiktoken"]
    return json.loads(done.stdout), loaded


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
