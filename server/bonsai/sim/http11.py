"""Just enough HTTP/1.1 for the simulator: requests with Content-Length,
keep-alive, JSON responses and chunked streaming responses."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 64 * 1024 * 1024


class HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class HttpRequest:
    method: str
    path: str
    query: str
    headers: dict[str, str]  # lower-case names
    body: bytes

    @property
    def keep_alive(self) -> bool:
        return self.headers.get("connection", "").lower() != "close"

    def json(self) -> Any:
        try:
            return json.loads(self.body or b"null")
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise HttpError(400, f"request body is not valid JSON: {exc}") from None


async def _read_head(reader: asyncio.StreamReader) -> list[str] | None:
    lines: list[str] = []
    size = 0
    while True:
        raw = await reader.readline()
        if not raw:
            if lines:
                raise HttpError(400, "connection closed inside the request head")
            return None
        size += len(raw)
        if size > MAX_HEADER_BYTES:
            raise HttpError(431, "request head too large")
        line = raw.decode("latin-1").rstrip("\r\n")
        if not line:
            if lines:
                return lines
            continue  # tolerate stray blank lines between requests
        lines.append(line)


async def read_request(reader: asyncio.StreamReader) -> HttpRequest | None:
    """The next request on the connection, or None when the client closed it."""
    head = await _read_head(reader)
    if head is None:
        return None
    parts = head[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise HttpError(400, f"bad request line: {head[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in head[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            raise HttpError(400, f"bad header line: {line[:80]!r}")
        headers[name.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise HttpError(411, "chunked request bodies are not supported; send Content-Length")
    length = int(headers.get("content-length", "0") or 0)
    if length > MAX_BODY_BYTES:
        raise HttpError(413, "request body too large")
    body = await reader.readexactly(length) if length else b""
    path, _, query = parts[1].partition("?")
    return HttpRequest(parts[0].upper(), path, query, headers, body)


def _head(status: int, headers: dict[str, str]) -> bytes:
    phrase = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "Status"
    lines = [f"HTTP/1.1 {status} {phrase}", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class ResponseWriter:
    """Writes one response; raises ConnectionError when the client is gone."""

    def __init__(self, writer: asyncio.StreamWriter, keep_alive: bool) -> None:
        self._writer = writer
        self._keep_alive = keep_alive
        self.status = 0

    async def send_bytes(
        self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.status = status
        head = {
            "content-type": content_type,
            "content-length": str(len(body)),
            "connection": "keep-alive" if self._keep_alive else "close",
            **(headers or {}),
        }
        self._writer.write(_head(status, head) + body)
        await self._writer.drain()

    async def send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()
        await self.send_bytes(status, body, "application/json", headers)

    async def start_stream(self, headers: dict[str, str]) -> None:
        self.status = 200
        head = {
            "content-type": "text/event-stream; charset=utf-8",
            "cache-control": "no-cache",
            "transfer-encoding": "chunked",
            "connection": "keep-alive" if self._keep_alive else "close",
            **headers,
        }
        self._writer.write(_head(200, head))
        await self._writer.drain()

    async def send_chunk(self, data: bytes) -> None:
        self._writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        await self._writer.drain()

    async def end_stream(self) -> None:
        self._writer.write(b"0\r\n\r\n")
        await self._writer.drain()
