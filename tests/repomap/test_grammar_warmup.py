"""A long-lived service's first map compiles the tag queries of the repository's
main languages (``grammar_warmup.py``), so the first edit of a session costs
what later edits do: on a warm start nothing is parsed, and the first edit used
to compile its language's query (~20 ms for Python, up to ~120 ms for C++).
A one-shot service (the CLI) does not pay it. Each check runs in a fresh
process: compiled queries live as long as the process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from repomap_helpers import write_repo

from bonsai.services.repomap.grammar_warmup import main_languages

SERVER = Path(__file__).resolve().parents[2] / "server"

SCRIPT = """
import json, sys
from pathlib import Path
from bonsai.services.repomap import RepoMapService, tags
from bonsai.settings import RepoMapSettings
root, db, long_lived = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "1"
service = RepoMapService(root, db, RepoMapSettings(workers=1), lambda t: (len(t) + 3) // 4)
if long_lived:
    service.keep_for_edits()
stats = service.build()
service.get(tokens=512, mentions="core_helper is slow")
before = sorted(tags._compiled)
target = root / "pkg" / "mod_003.py"
original = target.read_text()
target.write_text(original + "\\n\\ndef brand_new_name():\\n    pass\\n")
service.update_paths([target])
text = service.get(tokens=512, mentions="brand_new_name returns nothing").text
target.write_text(original)  # as it was, and cached so: the next start parses nothing
service.update_paths([target])
service.stop()
print(json.dumps({"parsed": stats.parsed, "compiled": before, "text": text}))
"""


def _run(root: Path, db: Path, long_lived: bool) -> dict:
    env = dict(os.environ, PYTHONPATH=str(SERVER))
    args = [sys.executable, "-c", SCRIPT, str(root), str(db), "1" if long_lived else "0"]
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120, check=True)
    result: dict = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_long_lived_warm_start_has_its_languages_compiled_before_the_first_edit(
    tmp_path: Path,
) -> None:
    root = write_repo(tmp_path / "repo", modules=30)
    (root / "web").mkdir()
    (root / "web" / "app.js").write_text("function start() { return 1; }\n")
    db = tmp_path / "cache.db"
    cold = _run(root, db, long_lived=False)  # fills the cache: later starts parse nothing
    assert cold["parsed"] > 30
    one_shot = _run(root, db, long_lived=False)
    assert one_shot["parsed"] == 0 and one_shot["compiled"] == []  # the CLI pays nothing
    daemon = _run(root, db, long_lived=True)
    assert daemon["parsed"] == 0
    # Python is nearly every file; one JavaScript file of 33 is under a tenth
    assert daemon["compiled"] == ["python"]
    assert daemon["text"] == one_shot["text"]  # the map after the edit is the same
    assert "def brand_new_name():" in daemon["text"]  # the edit reached the map


def test_main_languages_are_those_of_a_tenth_of_the_files_most_used_first() -> None:
    paths = [f"src/m{i}.py" for i in range(6)] + [f"web/c{i}.ts" for i in range(3)]
    paths += ["README", ".bashrc", "notes.txt", "web/app.JS"]
    # 6 python, 3 typescript, 1 javascript (.JS: suffixes are case-insensitive) of 13
    assert main_languages(paths) == ["python", "typescript"]
    assert main_languages(paths, min_share=0.05) == ["python", "typescript", "javascript"]
    assert main_languages(["README", "Makefile"]) == []
    assert main_languages([]) == []
