"""``bonsai serve`` under cProfile (the event loop's thread), for ``bench/load.py --profile``.

    python bench/profiled_daemon.py OUT.prof serve --socket auto

The clock is the loop thread's CPU time (what the bench's "µs per event" counts: waits
in epoll or fsync cost nothing); ``BONSAI_PROFILE_CLOCK=wall`` profiles wall time.

The daemon leaves through ``os._exit`` (no interpreter teardown), so the profile is
written just before it does.
"""

from __future__ import annotations

import cProfile
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from bonsai.cli import main as cli

out, argv = sys.argv[1], sys.argv[2:]
clock = time.perf_counter if os.environ.get("BONSAI_PROFILE_CLOCK") == "wall" else time.thread_time
profiler = cProfile.Profile(clock)
leave = cli._exit_now


def _dump_then_exit(code: int) -> None:
    profiler.disable()
    profiler.dump_stats(out)
    leave(code)


cli._exit_now = _dump_then_exit
profiler.enable()
sys.exit(cli.main(argv))
