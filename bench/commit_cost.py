"""What the commit record and the backups cost: per append, per turn, and the longest wait.

Two stores side by side in one run, the same workload interleaved in blocks
(so machine load hits both alike): one with the commit record attached (the
daemon's path: a ``pwrite`` after every commit that adds messages; its
fsync runs off the loop every five seconds, here in a thread as in the daemon), one without (the path before issue 18). Reported: the median time
per append and per turn (the store work of a streaming, tool-using turn:
start, partial saves, the assistant reply and two tool results, finish) and
the overhead in percent.

Then backups: appends run on the main thread while a worker thread backs the
database up over and over (the daemon's ``BackupKeeper`` path: its own
read-only connection, one ``backup.step(-1)``); reported are the longest and
the 99th-percentile append during backups beside the same without.

    .venv/bin/python bench/commit_cost.py [--appends 3000] [--turns 300] [--mb 20]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from bonsai.domain import Message
from bonsai.services.store import commit_record
from bonsai.services.store.backup import take_backup
from bonsai.services.store.db import open_database
from bonsai.services.store.sessions import SessionStore
from bonsai.services.store.turns import TurnStore

TEXT = "a user message of a usual length, " * 8


class Rig:
    def __init__(self, root: Path, name: str, record: bool) -> None:
        self.db_path = root / name / "bonsai.db"
        self.db_path.parent.mkdir()
        self.conn = open_database(self.db_path)
        if record:
            commit_record.attach(self.conn, self.db_path)
        self.store = SessionStore(self.conn)
        self.turns = TurnStore(self.conn)
        self.sid = self.store.create("/ws").session_id
        self.n = 0

    def append(self) -> None:
        self.store.append(self.sid, Message(role="user", content=TEXT))

    def turn(self) -> None:
        self.n += 1
        turn_id = f"t{self.n}"
        self.turns.start(self.sid, turn_id)
        self.store.append(self.sid, Message(role="user", content=TEXT), turn_id=turn_id)
        for k in range(1, 6):
            self.turns.save_partial(self.sid, turn_id, TEXT * k)
        self.store.append(self.sid, Message(role="assistant", content=TEXT * 5), turn_id=turn_id)
        self.store.append_many(
            self.sid,
            [Message(role="tool", content=TEXT, tool_call_id=f"c{self.n}.{i}") for i in (1, 2)],
            turn_id=turn_id,
        )
        self.turns.clear_partial(self.sid, turn_id)
        self.turns.finish(self.sid, turn_id, "done", None, [])

    def close(self) -> None:
        commit_record.detach(self.conn)
        self.conn.close()


def timed(fn: Callable[[], None], count: int) -> list[float]:
    out = []
    for _ in range(count):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


class Meter:
    """Times every call of the record's own work (the ``pwrite``, the fsync when due)."""

    def __init__(self) -> None:
        self.calls: list[float] = []
        self._real = commit_record.CommitRecord._write

    def __enter__(self) -> Meter:
        real, calls = self._real, self.calls

        def write(record: commit_record.CommitRecord, sync: bool = False) -> None:
            start = time.perf_counter()
            real(record, sync)
            calls.append(time.perf_counter() - start)

        commit_record.CommitRecord._write = write  # type: ignore[assignment,method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        commit_record.CommitRecord._write = self._real  # type: ignore[method-assign]


def side_by_side(with_rec: Rig, without: Rig, op: str, total: int) -> dict[str, float]:
    blocks = 50
    block = max(1, total // blocks)
    on: list[float] = []
    off: list[float] = []
    with Meter() as meter:
        for _ in range(blocks):
            off += timed(getattr(without, op), block)
            on += timed(getattr(with_rec, op), block)
    a, b = statistics.median(on) * 1e6, statistics.median(off) * 1e6
    own = sum(meter.calls) / len(on) * 1e6  # the record's work per operation, fsyncs included
    return {
        "with_us": round(a, 1),
        "without_us": round(b, 1),
        "overhead_pct": round((a / b - 1) * 100, 1),
        "record_us_per_op": round(own, 1),
        "record_pct_of_op": round(own / b * 100, 1),
        "record_us_median_write": round(statistics.median(meter.calls) * 1e6, 2),
    }


def backups_beside_appends(rig: Rig, mb: int, appends: int) -> dict[str, float]:
    filler = "x" * 4000
    while rig.db_path.stat().st_size < mb * 1024 * 1024:
        rig.store.append_many(rig.sid, [Message(role="user", content=filler)] * 200)
    quiet = timed(rig.append, appends)
    stop = threading.Event()
    taken: list[float] = []

    def keep_backing_up() -> None:
        while not stop.is_set():
            start = time.perf_counter()
            take_backup(rig.db_path, keep=2)
            taken.append(time.perf_counter() - start)

    worker = threading.Thread(target=keep_backing_up)
    worker.start()
    time.sleep(0.05)
    busy = timed(rig.append, appends)
    stop.set()
    worker.join()

    def p99(values: list[float]) -> float:
        return round(sorted(values)[int(len(values) * 0.99)] * 1e3, 2)

    return {
        "db_mb": round(rig.db_path.stat().st_size / 2**20, 1),
        "backups_taken": len(taken),
        "backup_s_median": round(statistics.median(taken), 3) if taken else 0.0,
        "append_max_ms_quiet": round(max(quiet) * 1e3, 2),
        "append_p99_ms_quiet": p99(quiet),
        "append_max_ms_during_backups": round(max(busy) * 1e3, 2),
        "append_p99_ms_during_backups": p99(busy),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--appends", type=int, default=3000)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--mb", type=int, default=20, help="database size for the backup run")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with_rec, without = Rig(root, "with", True), Rig(root, "without", False)
        record = commit_record.record_of(with_rec.conn)
        assert record is not None
        done = threading.Event()

        def fsync_every_second() -> None:  # the daemon's BackupKeeper._sync_loop
            while not done.wait(commit_record.SYNC_EVERY_S):
                record.sync_if_dirty()

        syncer = threading.Thread(target=fsync_every_second, daemon=True)
        syncer.start()
        results = {
            "append": side_by_side(with_rec, without, "append", args.appends),
            "turn": side_by_side(with_rec, without, "turn", args.turns),
        }
        done.set()
        results["backups"] = backups_beside_appends(with_rec, args.mb, min(args.appends, 2000))
        with_rec.close()
        without.close()
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for op in ("append", "turn"):
        r = results[op]
        print(
            f"{op:>7}: {r['with_us']:8.1f} µs with the record, {r['without_us']:8.1f} µs without"
            f"  ({r['overhead_pct']:+.1f}%); the record's own work {r['record_us_per_op']} µs"
            f" per {op} ({r['record_pct_of_op']}%; one write: median {r['record_us_median_write']} µs)"
        )
    b = results["backups"]
    print(
        f"backups of a {b['db_mb']} MB database ({b['backups_taken']} taken, median "
        f"{b['backup_s_median']} s each): longest append {b['append_max_ms_during_backups']} ms "
        f"(p99 {b['append_p99_ms_during_backups']} ms) beside {b['append_max_ms_quiet']} ms "
        f"(p99 {b['append_p99_ms_quiet']} ms) without"
    )


if __name__ == "__main__":
    main()
