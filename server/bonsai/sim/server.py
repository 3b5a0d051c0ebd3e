"""The simulator's HTTP server: connections, routing and control endpoints.

Routes:
  POST /v1/chat/completions (also /chat/completions)  OpenAI-style, SSE or JSON
  POST /v1/messages                                   Anthropic, SSE or JSON
  POST /v1/messages/count_tokens                      Anthropic token count
  GET  /v1/models                                     OpenAI shape, or Anthropic's
                                                      when anthropic-version is sent
  GET  /_sim/requests   POST /_sim/script   POST /_sim/reset   GET /_sim/health
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from pydantic import ValidationError

from bonsai.sim import anthropic_wire, openai_wire
from bonsai.sim._tok import tokenizer_name
from bonsai.sim.http11 import HttpError, HttpRequest, ResponseWriter, read_request
from bonsai.sim.inference import (
    ANTHROPIC,
    OPENAI,
    DropConnection,
    serve_count_tokens,
    serve_inference,
)
from bonsai.sim.script import Script
from bonsai.sim.sim_state import RecordedRequest, SimState

log = logging.getLogger("bonsai.sim")
Alive = Callable[[], bool]


class Simulator:
    """A provider simulator bound to a loopback port (``port=0``: any free one).

    Connections are kept alive as a real provider keeps them, unless ``keep_alive`` is
    False: then every response says ``connection: close`` and the connection ends.
    ``accepted`` counts the connections accepted so far."""

    def __init__(
        self,
        script: Script | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        keep_alive: bool = True,
    ):
        self.state = SimState(script or Script())
        self.keep_alive = keep_alive
        self.accepted = 0
        self._host = host
        self._port = port
        self._server: asyncio.Server | None = None
        self._connections: dict[asyncio.Task[None], asyncio.StreamWriter] = {}
        self._stopping = False

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._connection, self._host, self._port)
        self._port = self._server.sockets[0].getsockname()[1]
        log.info("simulator listening on %s", self.base_url)

    async def stop(self) -> None:
        """Stop listening and cut open connections (handlers notice and return)."""
        self._stopping = True
        if self._server is not None:
            self._server.close()
        for writer in self._connections.values():
            writer.transport.abort()
        tasks = list(self._connections)
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=2.0)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        """Host root: the Anthropic SDK's base URL; add ``/v1`` for OpenAI-style clients."""
        return f"http://{self._host}:{self._port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        return [r.model_copy(deep=True) for r in self.state.requests]

    def set_script(self, script: Script) -> None:
        self.state.set_script(script)

    def reset(self) -> None:
        self.state.reset()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections[task] = writer
        self.accepted += 1
        try:
            await self._serve_connection(reader, writer, self.accepted)
        except (ConnectionError, asyncio.IncompleteReadError, DropConnection):
            pass  # the client left, or a fault closes the socket on purpose
        except asyncio.CancelledError:
            if not self._stopping:
                raise
            # cancelled by stop(): end quietly (3.11's stream callback chokes on cancelled tasks)
        finally:
            if task is not None:
                self._connections.pop(task, None)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int
    ) -> None:
        while True:
            try:
                req = await read_request(reader)
            except HttpError as exc:
                await ResponseWriter(writer, False).send_json(exc.status, _plain_error(str(exc)))
                return
            if req is None:
                return
            keep = req.keep_alive and self.keep_alive
            out = ResponseWriter(writer, keep)
            await self._dispatch(req, out, lambda: not reader.at_eof(), number)
            if not keep:
                return

    async def _dispatch(
        self, req: HttpRequest, out: ResponseWriter, alive: Alive, number: int = 0
    ) -> None:
        if req.path.startswith("/_sim/"):
            return await self._control(req, out)
        rec = self.state.record(req.method, req.path, req.headers, number)
        try:
            await self._route(req, out, alive, rec)
        except HttpError as exc:
            rec.outcome = "error"
            await out.send_json(exc.status, _plain_error(str(exc)))
        finally:
            rec.status = out.status
        return None

    async def _route(
        self, req: HttpRequest, out: ResponseWriter, alive: Alive, rec: RecordedRequest
    ) -> None:
        path = req.path.rstrip("/")
        post = req.method == "POST"
        if post and path in ("/v1/chat/completions", "/chat/completions"):
            rec.route = "openai"
            return await serve_inference(OPENAI, self.state, req, out, alive, rec)
        if post and path == "/v1/messages":
            rec.route = "anthropic"
            return await serve_inference(ANTHROPIC, self.state, req, out, alive, rec)
        if post and path == "/v1/messages/count_tokens":
            rec.route = "count_tokens"
            return await serve_count_tokens(self.state, req, out, rec)
        if req.method == "GET" and path in ("/v1/models", "/models"):
            rec.outcome = "ok"
            models = self.state.script.models
            anthropic = "anthropic-version" in req.headers
            body = (
                anthropic_wire.models_json(models) if anthropic else openai_wire.models_json(models)
            )
            return await out.send_json(200, body)
        raise HttpError(404, f"no route for {req.method} {req.path}")

    async def _control(self, req: HttpRequest, out: ResponseWriter) -> None:
        action = (req.method, req.path.rstrip("/"))
        if action == ("GET", "/_sim/requests"):
            return await out.send_json(200, [r.model_dump() for r in self.state.requests])
        if action == ("GET", "/_sim/health"):
            return await out.send_json(200, {"ok": True, "tokenizer": tokenizer_name()})
        if action == ("POST", "/_sim/reset"):
            self.reset()
            return await out.send_json(200, {"ok": True})
        if action == ("POST", "/_sim/script"):
            try:
                script = Script.model_validate_json(req.body or b"{}")
            except ValidationError as exc:
                return await out.send_json(400, _plain_error(f"invalid script: {exc}"))
            self.set_script(script)
            return await out.send_json(200, {"ok": True, "steps": len(script.steps)})
        return await out.send_json(404, _plain_error(f"no control route {req.method} {req.path}"))


def _plain_error(message: str) -> dict[str, object]:
    return {"error": {"message": message, "type": "invalid_request_error"}}
