"""The parse worker's loop (``bonsai.services.repomap.worker.main``) with a
timestamp around each step, for ``repomap_timeline.py``:

    python repomap_timeline_worker.py LOG SPAWNED_AT

Writes one JSON line per step to LOG: its start up to the first request (the
imports), then per chunk the wait for the request, the parse and the write.
"""

from __future__ import annotations

import json
import sys
import time

log_path, spawned = sys.argv[1], float(sys.argv[2])
c0 = time.process_time()
from pathlib import Path  # noqa: E402 - timed: the worker's own imports

from bonsai.services.repomap.indexer_core import index_chunk  # noqa: E402
from bonsai.services.repomap.worker import _decode_request, encode_results  # noqa: E402

steps = [
    {
        "what": "start (imports)",
        "start": spawned,
        "end": time.monotonic(),
        "cpu": time.process_time() - c0,
    }
]


def step(what: str, start: float, cpu: float) -> None:
    steps.append(
        {"what": what, "start": start, "end": time.monotonic(), "cpu": time.process_time() - cpu}
    )


while True:
    t, c = time.monotonic(), time.process_time()
    line = sys.stdin.readline()
    step("wait for a chunk", t, c)
    if not line:
        break
    t, c = time.monotonic(), time.process_time()
    root, chunk = _decode_request(line)
    results = index_chunk(Path(root), chunk, decode=False)
    step("parse", t, c)
    t, c = time.monotonic(), time.process_time()
    sys.stdout.write(encode_results(results))
    sys.stdout.flush()
    step("write results", t, c)
with open(log_path, "w") as fh:
    fh.writelines(json.dumps(s) + "\n" for s in steps)
