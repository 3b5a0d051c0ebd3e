"""Running the daemon: open the store, listen, serve, stop cleanly.

**Invariant:** the daemon stops only on ``bonsai/daemon/stop``, a signal, or
(in stdio mode) its one client going away; an LSP ``exit`` from a socket
client closes that client's connection only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import stat
import struct
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import apsw

import bonsai.daemon.handlers  # noqa: F401  (registers handlers)
from bonsai import __version__
from bonsai.agent.tools import procs
from bonsai.daemon import heap, last_words, lifecycle, stalls
from bonsai.daemon.backups import BackupKeeper
from bonsai.daemon.rpc import ServedReader
from bonsai.daemon.socket_dir import UnsafeSocketDir, prepare_socket_dir
from bonsai.daemon.state import Daemon
from bonsai.protocol.models import ConfigChangedParams
from bonsai.services import env_errors
from bonsai.services.config import ConfigWatcher, user_config_path
from bonsai.services.privacy import open_private, secure_home, use_private_umask
from bonsai.services.redaction import RedactingFilter, register_environment
from bonsai.services.store import commit_record
from bonsai.services.store.backup import list_backups
from bonsai.services.store.db import DatabaseLock, StoreError, acquire_lock, open_database
from bonsai.services.store.health import verify_committed
from bonsai.services.store.turns import ToolRuns, recover_after_crash

log = logging.getLogger("bonsai.daemon")
LOOPBACK = {"127.0.0.1", "::1", "localhost"}


@dataclass(frozen=True)
class ServeOptions:
    home: Path
    stdio: bool = False
    socket_path: Path | None = None
    tcp: tuple[str, int] | None = None


class ServeError(Exception):
    pass


def parse_tcp(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    host = host.strip("[]")
    if host not in LOOPBACK:
        raise ServeError(f"--tcp must bind a loopback address (127.0.0.1 or ::1), not {host!r}")
    try:
        return host, int(port)
    except ValueError:
        raise ServeError(f"--tcp wants HOST:PORT, got {value!r}") from None


def setup_logging(home: Path) -> None:
    log_dir = home / "logs"
    log_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    open_private(log_dir / "daemon.log")
    handler = logging.FileHandler(log_dir / "daemon.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter())  # secrets never reach the log
    register_environment(os.environ)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    logging.getLogger("pygls").setLevel(logging.WARNING)


def peer_uid(sock: socket.socket) -> int | None:
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (OSError, AttributeError):
        return None
    return int(struct.unpack("3i", raw)[1])


class _PumpedStdin(asyncio.ReadTransport):
    """stdin read by a thread (a file or /dev/null, which epoll refuses), as a transport."""

    def __init__(self) -> None:
        super().__init__()
        self._closing = False

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True

    def is_reading(self) -> bool:
        return not self._closing

    def pause_reading(self) -> None:  # stdio's answers are written at once: never backed up
        pass

    def resume_reading(self) -> None:
        pass


def _pump_stdin(loop: asyncio.AbstractEventLoop, protocol: asyncio.Protocol) -> None:
    transport = _PumpedStdin()
    protocol.connection_made(transport)

    def pump() -> None:
        fd = sys.stdin.fileno()
        while not transport.is_closing():
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                loop.call_soon_threadsafe(protocol.eof_received)
                return
            loop.call_soon_threadsafe(protocol.data_received, chunk)

    threading.Thread(target=pump, name="bonsai-stdin", daemon=True).start()


async def _serve_stdio(daemon: Daemon) -> None:
    """The one client on stdin and stdout; its going away (or ``exit``) stops the daemon."""
    loop = asyncio.get_running_loop()
    out = sys.stdout.buffer

    def write(data: bytes) -> None:
        out.write(data)
        out.flush()

    protocol = ServedReader(daemon, "stdio", write=write, on_close=daemon.stop_requested.set)
    kind = os.fstat(sys.stdin.fileno()).st_mode
    if stat.S_ISFIFO(kind) or stat.S_ISSOCK(kind):
        await loop.connect_read_pipe(lambda: protocol, sys.stdin)
    else:
        _pump_stdin(loop, protocol)
    if protocol.served is not None:
        await protocol.served.finished
    daemon.stop_requested.set()


def _same_user(transport: asyncio.BaseTransport) -> bool:
    """A connection to the local socket from another uid is refused (logged)."""
    sock = transport.get_extra_info("socket")
    uid = peer_uid(sock) if sock is not None else None
    if uid is not None and uid != os.getuid():
        log.warning("refused a connection from uid %s", uid)
        return False
    return True


async def _start_unix(daemon: Daemon, path: Path) -> asyncio.Server:
    automatic = path == lifecycle.default_socket_path(daemon.home)
    try:
        prepare_socket_dir(path.parent, automatic=automatic)
    except UnsafeSocketDir as error:
        raise ServeError(f"refusing the socket {path}: {error}") from None
    if os.path.lexists(path):
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            raise ServeError(f"{path} exists and is not a socket; choose another --socket path")
        if lifecycle.try_connect(path) is not None:
            raise ServeError(f"a daemon already listens on {path}")
        path.unlink()
    old = os.umask(0o177)
    try:
        server = await asyncio.get_running_loop().create_unix_server(
            lambda: ServedReader(daemon, "unix", admit=_same_user), path=str(path)
        )
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    return server


async def run(options: ServeOptions) -> int:
    """Serve until told to stop. Raises ServeError/StoreError with one line for the user."""
    db_path = options.home / "bonsai.db"
    try:
        return await _run(options, db_path)
    except (ServeError, StoreError):
        raise
    except (OSError, apsw.Error) as error:
        problem = env_errors.environment_problem(error, db_path)
        if problem is None:
            raise
        if logging.getLogger().handlers:  # the log, never the user's screen, gets the trace
            log.error("bonsai serve failed: %s", problem, exc_info=error)
        raise ServeError(str(problem)) from None


def _open_home(home: Path) -> None:
    """A private home (created 0700, tightened if too open; said once), then the log."""
    use_private_umask()
    try:
        tightened = secure_home(home)
    except OSError as error:
        raise ServeError(env_errors.describe_os_error(error, home)) from None
    setup_logging(home)
    last_words.WORDS.install(home / "logs" / "daemon.log", asyncio.get_running_loop())
    if tightened:
        note = tightened.describe(home)
        log.warning("%s", note)
        print(f"bonsai serve: {note}", file=sys.stderr)


def _open_store(db_path: Path) -> tuple[DatabaseLock, apsw.Connection]:
    """Lock, verify against the commit record, open, start recording, repair a crash."""
    lock = acquire_lock(db_path)
    try:
        newest = next(iter(list_backups(db_path)), None)
        hint = f" (newest: {newest.when()}, {newest.messages} messages)" if newest else ""
        verify_committed(db_path, hint)
        conn = open_database(db_path, quick_check=False)
    except BaseException:
        lock.release()
        raise
    env_errors.remember_database(db_path)
    commit_record.attach(conn, db_path)
    for pid, started in ToolRuns(conn).processes():
        if procs.kill_orphan(pid, started):  # the parent-death signal should have done it
            log.warning("killed tool process group %s left by the previous daemon", pid)
    repaired = recover_after_crash(conn)
    if any(repaired.values()):
        log.warning("recovered after an unclean stop: %s", repaired)
    return lock, conn


async def _run(options: ServeOptions, db_path: Path) -> int:
    home = options.home
    gc_policy = heap.policy()
    heap.configure(gc_policy)  # the collector's thresholds; the heap settles once warmed
    _open_home(home)
    lock, conn = _open_store(db_path)
    daemon = Daemon(home, conn, db_path)
    servers: list[asyncio.Server] = []
    info: dict[str, object] = {"pid": daemon.pid, "version": __version__, "db": str(db_path)}
    loop = asyncio.get_running_loop()
    monitor = stalls.from_env(loop)  # BONSAI_STALLS: the loop's stalls, reported at the stop
    last_words.WORDS.stop_on_signals(loop, daemon.stop_requested.set)  # each named in the log
    watcher = ConfigWatcher([user_config_path(home)], lambda: _reload(daemon, loop))
    limits = daemon.settings().settings.daemon
    record = commit_record.record_of(conn)
    assert record is not None
    keeper = BackupKeeper(
        db_path, record, conn.total_changes, limits.backup_interval_s, limits.backups_kept
    )
    try:
        if options.socket_path is not None:
            servers.append(await _start_unix(daemon, options.socket_path))
            info["socket"] = str(options.socket_path)
        if options.tcp is not None:
            token = secrets.token_urlsafe(24)
            host, port = options.tcp
            tcp = await loop.create_server(lambda: ServedReader(daemon, "tcp", token), host, port)
            servers.append(tcp)
            info["tcp"] = {"host": host, "port": tcp.sockets[0].getsockname()[1]}
            info["token"] = token
        if servers:
            lifecycle.write_private_json(lifecycle.daemon_json_path(home), info)
        keeper.start()
        log.info("bonsai %s serving (pid %s)", __version__, daemon.pid)
        # the start-up's objects kept out of every later collection; no tokenizer is
        # loaded here: the first session that counts loads its own (session.base)
        heap.settle(gc_policy)
        last_words.crash_on_purpose(loop)  # BONSAI_DEBUG_CRASH only (tests)
        if options.stdio:
            stdio = asyncio.ensure_future(_serve_stdio(daemon))
        await daemon.stop_requested.wait()
        if options.stdio:
            stdio.cancel()
    except BaseException as error:
        last_words.WORDS.failed(error)  # said at the exit, below
        raise
    finally:
        if monitor is not None:
            monitor[0].stop()  # the report is of the time served, not of the stop
        procs.kill_all()
        await _shutdown(daemon, servers, options, watcher)
        await keeper.stop()
        commit_record.detach(conn)
        conn.close()
        lock.release()
        if monitor is not None:
            monitor[0].write(monitor[1])
        last_words.WORDS.say()
    return 0


def _reload(daemon: Daemon, loop: asyncio.AbstractEventLoop) -> None:
    def apply() -> None:
        problems = daemon.reload_settings()
        daemon.broadcast_all("bonsai/config/changed", ConfigChangedParams(problems=problems))

    loop.call_soon_threadsafe(apply)


def _bound_unix(servers: list[asyncio.Server]) -> bool:
    return any(sock.family == socket.AF_UNIX for server in servers for sock in server.sockets)


async def _shutdown(
    daemon: Daemon, servers: list[asyncio.Server], options: ServeOptions, watcher: ConfigWatcher
) -> None:
    log.info("stopping")
    ours = _bound_unix(servers)  # before close() forgets the sockets
    watcher.stop()
    for server in servers:
        server.close()
    for connection in list(daemon.connections.values()):
        connection.close()
    for pool in daemon.pools.values():
        with contextlib.suppress(Exception):
            await pool.close_all()
    daemon.hub.close()
    await daemon.hub.clients.aclose()  # the kept provider connections
    daemon.views.close()
    info = lifecycle.read_daemon_json(options.home)
    if info and info.get("pid") == daemon.pid:
        with contextlib.suppress(OSError):
            lifecycle.daemon_json_path(options.home).unlink()
    if options.socket_path is not None and ours:
        with contextlib.suppress(OSError):
            options.socket_path.unlink()  # only a socket this daemon bound: never another's file
