"""When the daemon backs its database up (every few minutes while it changes, and at stop)
and fsyncs the commit record (every five seconds while it changes).

The copy runs in a worker thread over its own read-only connection, so a
turn never waits for it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from bonsai.services.store.backup import Backup, list_backups, take_backup
from bonsai.services.store.commit_record import SYNC_EVERY_S, CommitRecord

log = logging.getLogger("bonsai.daemon.backups")


class BackupKeeper:
    def __init__(
        self,
        db_path: Path,
        record: CommitRecord,
        changes: Callable[[], int],
        interval_s: float,
        keep: int,
    ) -> None:
        self.db_path = db_path
        self.record = record
        self.changes = changes  # rows changed so far on the daemon's connection
        self.interval_s = interval_s
        self.keep = keep
        # no backup yet of a database that holds messages: take one soon
        first = record.messages > 0 and not list_backups(db_path)
        self._backed_up_at: int | None = None if first else changes()
        self._task: asyncio.Task[None] | None = None
        self._sync_task: asyncio.Task[None] | None = None
        self._running: asyncio.Lock = asyncio.Lock()

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._loop())
        self._sync_task = asyncio.ensure_future(self._sync_loop())

    async def _sync_loop(self) -> None:
        """The commit record's fsync, off the loop and out of every commit."""
        while True:
            await asyncio.sleep(SYNC_EVERY_S)
            if self.record.dirty:
                try:
                    await asyncio.to_thread(self.record.sync_if_dirty)
                except OSError as error:
                    log.warning("fsync of %s failed: %s", self.record.path, error)

    async def _loop(self) -> None:
        if self._backed_up_at is None:
            await asyncio.sleep(min(5.0, self.interval_s))
            await self.backup_if_changed()
        while True:
            await asyncio.sleep(self.interval_s)
            await self.backup_if_changed()

    def _changed(self) -> bool:
        return self._backed_up_at != self.changes()

    async def backup_if_changed(self) -> Backup | None:
        if not self._changed():
            return None
        async with self._running:
            changes = self.changes()
            try:
                backup = await asyncio.to_thread(take_backup, self.db_path, self.keep)
            except Exception as error:  # a backup must never take the daemon down
                log.warning("backup of %s failed: %s", self.db_path, error, exc_info=True)
                return None
            self._backed_up_at = changes
            await asyncio.to_thread(self.record.sync)
            log.info("backed up %s messages to %s", backup.messages, backup.path)
            return backup

    async def stop(self) -> None:
        """At clean shutdown: stop the timer and take a last backup if anything changed."""
        for task in (self._task, self._sync_task):
            if task is not None:
                task.cancel()
        await self.backup_if_changed()
