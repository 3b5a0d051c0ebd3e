"""A small synchronous JSON-RPC client for the CLI commands.

It connects to the user's daemon (starting it when none runs), performs the
LSP handshake, and sends ``bonsai/*`` requests. Notifications that arrive
while waiting are handed to a callback, in order.
"""

from __future__ import annotations

import itertools
import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bonsai.daemon import lifecycle
from bonsai.daemon.framing import encode

Notification = Callable[[str, dict[str, Any]], None]

# LSP initialize: this client shows every chat event kind (protocol: LATER_CHAT_EVENT_KINDS)
INITIALIZE = {
    "processId": None,
    "rootUri": None,
    "capabilities": {},
    "initializationOptions": {"chatEventKinds": ["cancelled"]},
}


class RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class DaemonClient:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.file = sock.makefile("rb")
        self._ids = itertools.count(1)
        self.on_notification: Notification | None = None
        self.on_request: Callable[[str, dict[str, Any]], Any] | None = None
        self.started = False  # True when this client started the daemon it talks to

    @classmethod
    def connect(cls, home: Path, start: bool = True) -> DaemonClient:
        sock = lifecycle.running_socket(home)
        started = False
        if sock is None:
            if not start:
                raise ConnectionError(f"no bonsai daemon is running for {home}")
            sock = lifecycle.spawn_daemon(home)
            started = True
        client = cls(sock)
        client.started = started
        client.request("initialize", INITIALIZE)
        client.notify("initialized", {})
        return client

    def _send(self, payload: dict[str, Any]) -> None:
        self.sock.sendall(encode(payload))

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        msg_id = next(self._ids)
        self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params or {}})
        while True:
            message = self.read()
            if message.get("id") == msg_id and "method" not in message:
                if "error" in message:
                    error = message["error"]
                    raise RpcError(int(error.get("code", -1)), str(error.get("message")))
                return message.get("result")
            self._dispatch(message)

    def read(self) -> dict[str, Any]:
        length = None
        while True:
            line = self.file.readline()
            if not line:
                raise ConnectionError("the daemon closed the connection")
            line = line.strip()
            if not line:
                break
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        if length is None:
            raise ConnectionError("malformed frame from the daemon")
        data: dict[str, Any] = json.loads(self.file.read(length))
        return data

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if not isinstance(method, str):
            return
        params = message.get("params") or {}
        if "id" in message:
            try:
                if self.on_request is None:
                    raise RpcError(-32601, f"this client does not handle {method}")
                result = self.on_request(method, params)
            except RpcError as error:
                failure = {"code": error.code, "message": str(error)}
                self._send({"jsonrpc": "2.0", "id": message["id"], "error": failure})
                return
            self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        elif self.on_notification is not None:
            self.on_notification(method, params)

    def pump(self) -> None:
        """Handle one incoming message (blocking)."""
        self._dispatch(self.read())

    def close(self) -> None:
        try:
            self.request("shutdown")
            self.notify("exit", {})
        except (OSError, ConnectionError, RpcError):
            pass
        self.file.close()
        self.sock.close()
