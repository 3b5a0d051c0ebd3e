"""Every source file's encoded tags, to show that a change to the extraction
changes no tag.

    PYTHONPATH=BEFORE/server .venv/bin/python bench/repomap_tags_identity.py --repo R --save before.json
    PYTHONPATH=$PWD/server .venv/bin/python bench/repomap_tags_identity.py --repo R --check before.json

For each source file of the repository (a language ``languages.py`` knows), the
SHA-256 of ``encode_tags(extract_tags(...))``: its definitions (names, kinds,
lines, signatures, depths), its references with their counts and its words,
exactly as the cache stores them. ``--save`` writes them; ``--check`` compares
with a saved run, prints how many are identical and the paths that differ, and
exits 1 if any does. Which ``bonsai`` is measured is printed first, so the two
runs say which code they ran.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import bonsai
from bonsai.services.repomap.discovery import IgnoreRules, discover
from bonsai.services.repomap.languages import language_for_path
from bonsai.services.repomap.records import encode_tags
from bonsai.services.repomap.tags import extract_tags


def digests(root: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for cand in discover(IgnoreRules(root)).files:
        language = language_for_path(cand.path)
        if language is None:
            continue
        data = (root / cand.path).read_bytes()
        if b"\0" in data[:8192]:
            continue  # binary: never parsed (indexer_core.analyse)
        encoded = encode_tags(extract_tags(cand.path, data, language))
        out[cand.path] = hashlib.sha256(encoded.encode()).hexdigest()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, type=Path)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--save", type=Path)
    group.add_argument("--check", type=Path)
    args = parser.parse_args()
    print(f"bonsai from {Path(bonsai.__file__).parent}")
    found = digests(args.repo.resolve())
    if args.save is not None:
        args.save.write_text(json.dumps(found, sort_keys=True))
        print(f"{args.repo}: {len(found)} source files' tags saved to {args.save}")
        return
    saved: dict[str, str] = json.loads(args.check.read_text())
    differ = sorted(p for p in saved.keys() | found.keys() if saved.get(p) != found.get(p))
    same = len(saved.keys() & found.keys()) - len(set(differ) & saved.keys() & found.keys())
    print(f"{args.repo}: {same} of {len(found)} source files' tags identical to {args.check}")
    for path in differ[:20]:
        print(f"  differs: {path}")
    if differ:
        sys.exit(1)


if __name__ == "__main__":
    main()
