"""Memory index build benchmark: from the files to a searchable index, and one change.

Usage::

    .venv/bin/python bench/memory_build.py [--model DIR] [--sizes 1000,10000] [--repeat 3]

For each size the labelled entries of ``bench/memory_set.py`` (plus the
paraphrase set's) are padded with generic notes, written once as markdown
files into a temporary user store, and then, ``--repeat`` times:

* **build**: a new ``MemoryService`` with its watcher running (as in the
  daemon) and no index file parses every entry (``view``) and indexes it
  (``sync``: full-text rows, entity links, term sets, vectors, segment merge);
  reported per entry, wall and CPU (``time.process_time``, which counts every
  thread of the process), CPU split into parse and index;
* **restart**: the same on the index just built (a daemon start: every file
  parsed, nothing to write);
* **edit / add / delete / rename**: one file changed by hand, then the
  watcher's resync (``view`` + ``sync``), in milliseconds per change, and the
  first query after it (which loads the new index generation).

The best of the repeats is reported (the machine is shared; the best is the
least disturbed run). The embedding model defaults to the configured memory
model; without one the tiny test model is built in the temporary folder.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import memory_set
from bonsai.services.config import bonsai_home, load_settings
from bonsai.services.memory.embedding import model_dir
from bonsai.services.memory.service import MemoryService
from bonsai.settings import MemorySettings
from memory_retrieval import paraphrase_set, write_store
from memory_set import TODAY

Timing = tuple[float, float]  # wall seconds, CPU seconds
QUERY = "Which city did the technical writer from Saffron Logistics move to?"


def timed(action: Callable[[], object]) -> Timing:
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return time.perf_counter() - wall, time.process_time() - cpu


def service_for(home: Path, model: Path) -> MemoryService:
    service = MemoryService(
        home, None, MemorySettings(model_path=str(model)), env={}, today=lambda: TODAY
    )
    service.embeddings()  # the model loads once per daemon, not per build: not timed
    return service


def one_round(home: Path, model: Path) -> dict[str, Timing]:
    shutil.rmtree(home / "index", ignore_errors=True)
    out: dict[str, Timing] = {}
    service = service_for(home, model)
    watcher = service.watch(lambda _: None)
    try:
        out["parse"] = timed(service.view)
        out["index"] = timed(service.sync)
        service.search("warm up", 5)
        store = home / "memory"
        victim = sorted(store.glob("*.md"))[len(list(store.glob("*.md"))) // 2]
        original = victim.read_text(encoding="utf-8")

        def resync() -> None:
            service.view()
            service.sync()

        def change(key: str, edit: Callable[[], object]) -> None:
            edit()
            service.note_changed()  # what the watcher's event does, without waiting for it
            out[key] = timed(resync)
            # the next turn's query reads the new index generation
            out[f"{key} query"] = timed(lambda: service.search(QUERY, 5))

        change("edit", lambda: victim.write_text(original + "One more line.\n", "utf-8"))
        added = store / "bench-added-entry.md"
        change("add", lambda: added.write_text(original, encoding="utf-8"))
        change("delete", added.unlink)
        renamed = store / "bench-renamed-entry.md"
        change("rename", lambda: victim.rename(renamed))
        renamed.rename(victim)
        victim.write_text(original, encoding="utf-8")
        resync()
    finally:
        watcher.stop()
        service.close()
    service = service_for(home, model)
    try:
        out["restart"] = timed(lambda: (service.view(), service.sync()))
    finally:
        service.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, help="model2vec folder (default: configured)")
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    home_dir = bonsai_home()
    model = args.model or model_dir(home_dir, load_settings(home_dir, None).settings.memory)
    with tempfile.TemporaryDirectory(prefix="bonsai-build-bench-") as tmp:
        if not model.is_dir():
            sys.path.insert(0, str(Path(__file__).parents[1] / "tests" / "memory"))
            from tiny_model2vec import build_tiny_model

            model = build_tiny_model(Path(tmp) / "model")
        print(f"model: {model}")
        for size in (int(s) for s in args.sizes.split(",")):
            labelled = memory_set.build()
            entries = labelled.entries + paraphrase_set()[0]
            entries += memory_set.padding(max(size - len(entries), 0))
            home = Path(tmp) / f"home-{size}"
            write_store(home / "memory", entries)
            rounds = [one_round(home, model) for _ in range(args.repeat)]
            best = {key: min(r[key] for r in rounds) for key in rounds[0]}
            n = len(entries)
            build_wall = best["parse"][0] + best["index"][0]
            build_cpu = best["parse"][1] + best["index"][1]
            print(
                f"\n{n} entries: build {build_wall * 1000 / n:.3f} ms/entry wall, "
                f"{build_cpu * 1000 / n:.3f} CPU (parse {best['parse'][1] * 1000 / n:.3f} "
                f"+ index {best['index'][1] * 1000 / n:.3f}); "
                f"restart {best['restart'][0] * 1000 / n:.3f} ms/entry wall, "
                f"{best['restart'][1] * 1000 / n:.3f} CPU"
            )
            for label, suffix in (("resync", ""), ("first query after", " query")):
                print(
                    f"one change, {label}, ms wall / CPU: "
                    + ", ".join(
                        f"{key} {best[key + suffix][0] * 1000:.1f} / "
                        f"{best[key + suffix][1] * 1000:.1f}"
                        for key in ("edit", "add", "delete", "rename")
                    )
                )
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
