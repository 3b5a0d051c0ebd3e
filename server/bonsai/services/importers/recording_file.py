"""A recording's bytes, read as a recording can be trusted to be: a regular file
of bounded size.

``bonsai import`` and ``bonsai/session/import`` read the file in the daemon: a
FIFO (or a symlink to one) would hang the import's thread for ever, ``/dev/zero``
or a runaway 30 GB log would fill the daemon's memory and take every session
down with it. The file is opened non-blocking, must be a regular file, and is
refused above ``MAX_RECORDING_BYTES`` with its size, before anything is read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from bonsai.services.importers.errors import ImportFormatError

MAX_RECORDING_BYTES = 256 * 1024 * 1024  # the largest recordings seen are tens of MB


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):,.0f} MiB"


def read_recording(path: Path, limit: int = MAX_RECORDING_BYTES) -> bytes:
    source = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise ImportFormatError(source, f"cannot read the file: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ImportFormatError(source, "is a folder; name a recording file inside it")
        if not stat.S_ISREG(info.st_mode):
            raise ImportFormatError(source, "is not a regular file (a pipe, socket or device)")
        if info.st_size > limit:
            raise ImportFormatError(
                source, f"is {_mib(info.st_size)}; recordings over {_mib(limit)} are not imported"
            )
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)  # a file still growing is cut off here
    except OSError as exc:
        raise ImportFormatError(source, f"cannot read the file: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ImportFormatError(source, f"grew past {_mib(limit)} while read; not imported")
    return data
