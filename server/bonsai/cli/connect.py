"""``bonsai connect``: relay stdio to the user's shared daemon, starting it if needed."""

from __future__ import annotations

import os
import socket
import sys
import threading
from pathlib import Path

from bonsai.daemon import lifecycle


def _pump_stdin(sock: socket.socket) -> None:
    fd = sys.stdin.fileno()
    try:
        while chunk := os.read(fd, 65536):
            sock.sendall(chunk)
    except OSError:
        pass
    finally:
        try:
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def relay(home: Path) -> int:
    try:
        sock = lifecycle.running_socket(home) or lifecycle.spawn_daemon(home)
    except RuntimeError as error:
        print(f"bonsai connect: {error}", file=sys.stderr)
        return 1
    threading.Thread(target=_pump_stdin, args=(sock,), daemon=True).start()
    out = sys.stdout.fileno()
    try:
        while chunk := sock.recv(65536):
            view = memoryview(chunk)
            while view:
                view = view[os.write(out, view) :]
    except OSError:
        pass
    return 0
