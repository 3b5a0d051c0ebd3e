"""Where a cold build's CPU per file goes, each part as a ratio to a plain parse.

    .venv/bin/python bench/repomap_extract.py --repo bench/out/repos/sympy [--files 300] [--rounds 5]

One process, one thread. The files (every k-th source file of the repository,
``--files`` of them) are read once. Then, ``--rounds`` times, a plain parse of
all of them is timed (``time.process_time``), and right after it the
extraction cut after each of its steps, file by file as a build runs it (the
tree still in the caches): parse + the query cursor's pass, + pairing names
with definitions, + the reference counts, + lines, signatures and nesting,
+ the words (the whole ``extract_tags``); then reading the files through the
workspace's confinement, the row (hash and encoding), and the whole
``index_file`` of an uncached file. A step's cost is the difference between
its line and the one before. Every figure is the median ratio to the parse of
its own round, since the machine is shared and absolute times move with load.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from bonsai.services.repomap import tags as T
from bonsai.services.repomap.discovery import Candidate, IgnoreRules, discover
from bonsai.services.repomap.indexer_core import _read, index_file
from bonsai.services.repomap.languages import language_for_path
from bonsai.services.repomap.records import encode_tags
from bonsai.services.repomap.words import file_words

STEPS = ("parse", "+ query pass", "+ pairing", "+ references", "+ lines, signatures, nesting")


def _cpu(run: Callable[[], object]) -> float:
    c0 = time.process_time()
    run()
    return time.process_time() - c0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, type=Path)
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    root: Path = args.repo.resolve()
    found = [c for c in discover(IgnoreRules(root)).files if language_for_path(c.path)]
    step = max(1, len(found) // args.files)
    cands: list[Candidate] = found[::step][: args.files]
    items = [(c.path, (root / c.path).read_bytes(), language_for_path(c.path) or "") for c in cands]
    megabytes = sum(len(d) for _, d, _ in items) / 1e6
    print(f"{root.name}: {len(items)} of {len(found)} source files, {megabytes:.1f} MB")
    compiled = {lang: T._compiled_for(lang) for _, _, lang in items}
    parsers = {lang: T._parser(lang, c) for lang, c in compiled.items()}

    def cut(after: int) -> None:
        """The extraction of every file, stopped after step ``after``."""
        for _, data, lang in items:
            tree = parsers[lang].parse(data)
            if after < 1:
                continue
            captures = compiled[lang].captures(tree.root_node)
            if after < 2:
                continue
            paired = T._paired(captures, data)
            if after < 3:
                continue
            T._references(captures.get("ref", []), data, {p[5] for p in paired})
            if after < 4:
                continue
            T._nest(paired, data, compiled[lang].body)

    tags = [T.extract_tags(path, data, lang) for path, data, lang in items]
    parts: dict[str, Callable[[], object]] = {name: partial(cut, i) for i, name in enumerate(STEPS)}
    parts["+ words (= extract_tags)"] = lambda: [T.extract_tags(p, d, lang) for p, d, lang in items]
    parts["words alone"] = lambda: [
        file_words(path, data, (d.name for d in t.definitions))
        for t, (path, data, _) in zip(tags, items, strict=True)
    ]
    parts["read (confined)"] = lambda: [_read(root, path) for path, _, _ in items]
    parts["row: sha256 + encode"] = lambda: [
        (hashlib.sha256(data).hexdigest(), encode_tags(t))
        for t, (_, data, _) in zip(tags, items, strict=True)
    ]
    parts["index_file, uncached (all)"] = lambda: [index_file(root, c, None) for c in cands]
    ratios: dict[str, list[float]] = {name: [] for name in parts}
    parse_cpu: list[float] = []
    for _ in range(args.rounds):
        base = _cpu(lambda: cut(0))
        parse_cpu.append(base)
        for name, run in parts.items():
            ratios[name].append(_cpu(run) / base)
    print(f"plain parse: median {statistics.median(parse_cpu):.3f} s CPU over {args.rounds} rounds")
    for name, values in ratios.items():
        spread = " ".join(f"{v:.3f}" for v in values)
        print(f"  {name:<30} {statistics.median(values):6.3f}x parse   ({spread})")


if __name__ == "__main__":
    main()
