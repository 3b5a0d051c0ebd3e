"""The JSON-RPC layer: the only code that knows pygls and the wire.

One pygls ``LanguageServer`` (with its own protocol) per connection, all
sharing one :class:`~bonsai.daemon.state.Daemon`. pygls brings the LSP
lifecycle, request bookkeeping and server→client requests; bonsai brings its
own framing loop (clear errors for bad frames), raw-dict params validated by
the pydantic models of the method table, and per-connection ``exit``.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import json
import logging
import re
from collections.abc import Awaitable, Callable, Generator
from concurrent.futures import Future
from contextvars import copy_context
from dataclasses import dataclass
from typing import Any, cast

from cattrs import Converter
from lsprotocol import types as lsp
from pydantic import ValidationError
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcRequestCancelled,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    LanguageServerProtocol,
    default_converter,
)
from pygls.protocol.json_rpc import JsonRPCResponseMessage
from pygls.protocol.language_server import lsp_method

from bonsai import __version__
from bonsai.daemon import framing
from bonsai.daemon.reader import FramedReader, feed_from
from bonsai.daemon.state import Connection, Daemon
from bonsai.errors import BonsaiError, ConfigError, NotFound, Unauthorized
from bonsai.protocol.methods import BY_NAME, Method
from bonsai.protocol.models import Wire
from bonsai.services.env_errors import runtime_problem
from bonsai.services.providers.types import ProviderError
from bonsai.services.store.sessions import UnknownSession
from bonsai.session import request_trace
from bonsai.session.views import Encoded

log = logging.getLogger("bonsai.rpc")
# No bonsai params nest this deep; deeper values are refused before validation
# (a 300-deep config value, once stored, made every later config/get fail).
MAX_PARAMS_DEPTH = 64
_SURROGATE = re.compile("[\ud800-\udfff]")
# errors that name a path the client gave: answered as invalid params
_PATH_ERRNOS = {
    errno.ENOENT,
    errno.ENOTDIR,
    errno.EISDIR,
    errno.ENAMETOOLONG,
    errno.ELOOP,
    errno.EACCES,
    errno.EEXIST,
}


@dataclass(frozen=True)
class Ctx:
    """What a handler gets besides its params."""

    daemon: Daemon
    connection: Connection
    protocol: BonsaiProtocol


Handler = Callable[[Ctx, Any], Awaitable[Wire | Encoded]]
HANDLERS: dict[str, Handler] = {}
# Every handler is marked, as ruff's server marks its handlers. Read-only ones change
# no state and notify nobody; what they compute beyond a lookup runs off the event
# loop, on the view worker over one snapshot (``session.views``), so no read ever
# delays a streamed event. Mutating ones run on the loop, in arrival order.
READ_ONLY: set[str] = set()
MUTATING: set[str] = set()


def handles(name: str, *, read_only: bool) -> Callable[[Handler], Handler]:
    """Register the handler of one request of the method table, marked read-only or mutating."""
    method = BY_NAME[name]
    assert method.direction == "request", name

    def register(fn: Handler) -> Handler:
        HANDLERS[name] = fn
        (READ_ONLY if read_only else MUTATING).add(name)
        return fn

    return register


def describe_validation(error: ValidationError) -> str:
    parts = []
    for item in error.errors()[:5]:
        where = ".".join(str(p) for p in item["loc"]) or "params"
        message = item["msg"]
        if item["type"] == "extra_forbidden":
            message = "unknown field"
        parts.append(f"{where}: {message}")
    return "Invalid params: " + "; ".join(parts)


def params_problem(params: dict[str, Any], max_depth: int = MAX_PARAMS_DEPTH) -> str | None:
    """Why ``params`` cannot be taken at all, naming where; None when they can.

    Too deep a nesting, or text holding an unpaired surrogate (valid JSON, but
    not Unicode: it cannot be stored, logged or written to a path). Iterative,
    so no input reaches the recursion limit."""
    stack: list[tuple[Any, str, int]] = [(params, "params", 0)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return f"{where[:80]}: text holds an unpaired surrogate (not valid Unicode)"
            continue
        if isinstance(item, dict):
            children: list[tuple[Any, Any]] = list(item.items())
        elif isinstance(item, list):
            children = list(enumerate(item))
        else:
            continue
        if depth >= max_depth:
            field = where.split(".")[0]
            return f"{field}: nested deeper than {max_depth} levels"
        for key, child in children:
            path = str(key) if where == "params" else f"{where}.{key}"
            if isinstance(key, str) and _SURROGATE.search(key):
                return f"{where[:80]}: a field name holds an unpaired surrogate"
            stack.append((child, path, depth + 1))
    return None


def to_rpc_error(method: str, error: BaseException) -> JsonRpcException:
    """The one place where exceptions become JSON-RPC errors."""
    if isinstance(error, JsonRpcException):
        return error
    if isinstance(error, ValidationError):
        return JsonRpcInvalidParams(message=describe_validation(error))
    if isinstance(error, UnknownSession):
        return JsonRpcException(code=NotFound.code, message=str(error))
    if isinstance(error, BonsaiError):
        return JsonRpcException(code=error.code, message=error.message)
    if (problem := runtime_problem(error)) is not None:  # a full disk, a read-only file
        log.error("%s: %s", method, problem, exc_info=error)
        return JsonRpcException(code=BonsaiError.code, message=f"{method}: {problem}"[:500])
    if isinstance(error, ProviderError) and error.kind == "auth":
        return JsonRpcException(code=ConfigError.code, message=error.message)
    if isinstance(error, OSError):
        return _os_error(method, error)
    if isinstance(error, ValueError) and "embedded null byte" in str(error):
        return JsonRpcInvalidParams(message="Invalid params: a path holds a NUL character")
    log.error("handler %s failed", method, exc_info=error)
    short = f"{method} failed: {type(error).__name__}: {error}"
    return JsonRpcInternalError(message=short[:300])


def _os_error(method: str, error: OSError) -> JsonRpcException:
    """A file-system error, mostly from a path the client gave: a clear answer."""
    text = error.strerror or str(error) or type(error).__name__
    if error.filename:
        text = f"{text}: {error.filename}"
    log.warning("%s: %s", method, text[:300])
    if error.errno in _PATH_ERRNOS:
        return JsonRpcInvalidParams(message=f"Invalid params: {text}"[:300])
    return JsonRpcException(code=BonsaiError.code, message=f"{method}: {text}"[:300])


def _feature(method: Method, handler: Handler, ctx: Ctx) -> Callable[[Any], Awaitable[Any]]:
    async def run(params: Any) -> Any:
        task = asyncio.current_task()
        if task is not None:  # named for what it serves (the stall monitor's report)
            task.set_name(method.name)
        ctx.protocol.unstarted.discard(ctx.protocol._ctx_msg_id.get())
        try:
            raw = {} if params is None else params
            if not isinstance(raw, dict):
                raise JsonRpcInvalidParams(message="Invalid params: params must be an object")
            problem = params_problem(raw)
            if problem is not None:
                raise JsonRpcInvalidParams(message=f"Invalid params: {problem}")
            if not ctx.connection.authenticated:
                raise Unauthorized("authentication required")
            result = await handler(ctx, method.params.model_validate(raw))
            if isinstance(result, Encoded):
                return _answered(ctx.protocol, result)
            return result.dump()
        except asyncio.CancelledError:
            raise
        except Exception as error:
            raise to_rpc_error(method.name, error) from None

    return run


CLIENT_NAMES = {"vscode": "VS Code", "neovim": "Neovim", "nvim": "Neovim", "e2e": "test client"}


def client_name(params: lsp.InitializeParams) -> str:
    """The client in words, from ``initializationOptions.client`` or ``clientInfo``."""
    options = params.initialization_options
    raw = options.get("client") if isinstance(options, dict) else None
    if not isinstance(raw, str) and params.client_info is not None:
        raw = params.client_info.name
    if not isinstance(raw, str) or not raw:
        return ""
    return CLIENT_NAMES.get(raw.strip().lower(), raw.strip()[:40])


def chat_event_kinds(params: lsp.InitializeParams) -> frozenset[str]:
    """The later chat event kinds a client shows (``initializationOptions.chatEventKinds``);
    anything but a list of strings names none, and the client gets the older shapes."""
    options = params.initialization_options
    kinds = options.get("chatEventKinds") if isinstance(options, dict) else None
    if not isinstance(kinds, list):
        return frozenset()
    return frozenset(kind for kind in kinds if isinstance(kind, str))


class BonsaiProtocol(LanguageServerProtocol):
    """LSP protocol with per-connection exit and raw ``bonsai/*`` params."""

    on_exit: Callable[[], None] | None = None
    token: str | None = None
    connection: Connection | None = None
    traced: frozenset[str] = frozenset()  # methods stamped end to end (request_trace)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # this connection's mutating requests whose handler has not begun: while any is
        # there, no later request of it is answered at once (it must see their writes)
        self.unstarted: set[Any] = set()

    @lsp_method(lsp.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        if self.on_exit is not None:
            self.on_exit()
        yield from ()

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams) -> Generator[Any, Any, Any]:
        if self.token is not None and self.connection is not None:
            options = params.initialization_options
            given = getattr(options, "token", None)
            if isinstance(options, dict):
                given = options.get("token")
            if given != self.token:
                raise to_rpc_error(
                    lsp.INITIALIZE, Unauthorized("authentication required: bad token")
                )
            self.connection.authenticated = True
        if self.connection is not None:
            self.connection.name = client_name(params)
            self.connection.chat_event_kinds = chat_event_kinds(params)
        result = yield from super().lsp_initialize(params)
        return result

    def send_frame(self, frame: bytes) -> None:
        """Write a notification framed by :func:`framing.notification` as it is."""
        if self.writer is not None:
            self.writer.write(frame)

    def _send_handler_result(self, future: Future[Any], *, msg_id: Any) -> None:
        """Answer a request whose handler raised a JSON-RPC error quietly.

        Every bonsai handler error reaches here already mapped by
        :func:`to_rpc_error`, which logged the traceback of a real bug; pygls
        would log each one again at ERROR with a traceback, even errors raised
        on purpose (invalid params, unknown session), burying the real ones."""
        self.unstarted.discard(msg_id)
        error = None if future.cancelled() else future.exception()
        if isinstance(error, JsonRpcException):
            self._request_futures.pop(msg_id, None)
            self._send_response(msg_id, error=error.to_response_error())
            return
        result = None if future.cancelled() or error is not None else future.result()
        if result is ANSWERED or isinstance(result, Encoded):
            self._request_futures.pop(msg_id, None)
            self._result_types.pop(msg_id, None)
            if isinstance(result, Encoded):  # encoded on the view worker: sent as it is
                self.send_frame(encoded_response(msg_id, result, request_trace.current()))
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def handle_message(self, message: Any) -> None:
        """A ``bonsai/*`` request or notification (made by :meth:`decode`, its envelope
        already checked) goes straight to its handler: pygls' dispatch tells the kinds
        apart by ``isinstance`` against runtime-checkable protocols, about a fifth of
        the loop's time for a poll answered as kept (``bench/poll_loop.py``)."""
        kind = type(message)
        if self._shutdown or kind not in (JsonRPCRequestMessage, JsonRPCNotification):
            super().handle_message(message)
        elif kind is JsonRPCRequestMessage:
            if message.method in MUTATING:
                self.unstarted.add(message.id)
            copy_context().run(self._handle_request, message.id, message.method, message.params)
        else:
            copy_context().run(self._handle_notification, message.method, message.params)

    def decode(self, data: dict[str, Any]) -> Any:
        if data.get("jsonrpc") != "2.0":
            raise framing_error(-32600, "Invalid Request: jsonrpc must be '2.0'")
        method = data.get("method")
        if "method" in data and not isinstance(method, str):
            raise framing_error(-32600, "Invalid Request: method must be a string")
        raw_id = data.get("id")
        if raw_id is not None and (isinstance(raw_id, bool) or not isinstance(raw_id, str | int)):
            raise framing_error(-32600, "Invalid Request: id must be a string or a number")
        msg_id = cast("str | int", raw_id)
        if isinstance(method, str) and method.startswith("bonsai/"):
            params = data.get("params")
            if "id" in data:
                return JsonRPCRequestMessage(id=msg_id, method=method, jsonrpc="2.0", params=params)
            return JsonRPCNotification(method=method, jsonrpc="2.0", params=params)
        if method is None and "id" in data and "error" not in data:
            self._result_types.pop(msg_id, None)
            return JsonRPCResponseMessage(id=msg_id, jsonrpc="2.0", result=data.get("result"))
        if "params" not in data and method is not None and "id" in data:
            data = {**data, "params": None}
        return self.structure_message(data)


ANSWERED = object()  # a request whose handler wrote its response itself


def _answered(protocol: BonsaiProtocol, result: Encoded) -> object:
    """Write an encoded answer from the request's own task, now, rather than from the
    task's done callback a turn of the loop later (a busy loop's turn is milliseconds)."""
    msg_id = protocol._ctx_msg_id.get()
    if msg_id is None:  # not called for a request (a test's direct call)
        return result
    trace = request_trace.current()
    if trace is not None:
        trace.mark("framed")
    protocol.send_frame(encoded_response(msg_id, result, trace))
    return ANSWERED


def encoded_response(
    msg_id: Any, result: Encoded, trace: request_trace.Trace | None = None
) -> bytes:
    """The framed response to request ``msg_id`` whose result is already JSON: the
    result's bytes copied once, into the frame (a wire view is some 100 KB). A traced
    request's stamps go beside the result (``request_trace``)."""
    stamps = b"" if trace is None else b'"trace":%s,' % trace.json()
    head = b'{"jsonrpc":"2.0","id":%s,%s"result":' % (json.dumps(msg_id).encode(), stamps)
    length = len(head) + len(result.body) + 1
    return b"Content-Length: %d\r\n\r\n%s%s}" % (length, head, result.body)


class _EnvelopeError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def framing_error(code: int, message: str) -> _EnvelopeError:
    return _EnvelopeError(code, message)


class Writer:
    """Adapts an asyncio or file-like sink to pygls' writer protocol."""

    def __init__(self, write: Callable[[bytes], Any], close: Callable[[], Any]) -> None:
        self._write = write
        self._close = close

    def write(self, data: bytes) -> None:
        try:
            self._write(data)
        except (BrokenPipeError, ConnectionResetError, RuntimeError):
            log.info("client went away while writing")

    def close(self) -> None:
        self._close()


@functools.cache
def shared_converter() -> Converter:
    """One cattrs converter for every connection: building one, and the unstructure
    functions it generates on first use, costs a few hundred milliseconds of the
    loop that streams every session, each time a client connects."""
    return default_converter()


def build_server(daemon: Daemon, kind: str, writer: Writer, close: Callable[[], None]) -> Ctx:
    server = LanguageServer(
        "bonsai", __version__, protocol_cls=BonsaiProtocol, converter_factory=shared_converter
    )
    protocol = server.protocol
    assert isinstance(protocol, BonsaiProtocol)
    protocol.set_writer(writer)  # type: ignore[arg-type]
    connection = daemon.add_connection(kind, protocol, close)
    protocol.connection = connection
    protocol.on_exit = close
    protocol.traced = request_trace.methods()
    ctx = Ctx(daemon, connection, protocol)
    features = server.protocol.fm.features
    for name, handler in HANDLERS.items():
        # what ``server.feature(name)(...)`` does for a function that takes no server, less
        # the check whether it wants one (its signature and type hints, inspected anew for
        # every function: 4 ms of the loop for every client connecting)
        assert name not in features, name
        features[name] = _feature(BY_NAME[name], handler, ctx)
    return ctx


def _send_error(ctx: Ctx, msg_id: Any, code: int, message: str) -> None:
    payload = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
    ctx.protocol.writer.write(framing.encode(payload))  # type: ignore[union-attr]


def handle_body(ctx: Ctx, body: bytes) -> None:
    protocol = ctx.protocol
    data = framing.decode_body(body)
    if isinstance(data, framing.BadMessage):
        _send_error(ctx, None, data.code, data.message)
        return
    msg_id = data.get("id") if isinstance(data.get("id"), str | int) else None
    try:
        message = protocol.decode(data)
    except _EnvelopeError as error:
        _send_error(ctx, msg_id, error.code, error.message)
        return
    except JsonRpcException as error:
        if "method" in data and "id" in data:
            _send_error(ctx, msg_id, error.code, error.message or "Invalid params")
        return
    if protocol._shutdown and "id" in data and data.get("method") not in (None, "exit"):
        # pygls drops requests after shutdown silently; LSP wants InvalidRequest
        _send_error(ctx, msg_id, -32600, "Invalid Request: this connection was shut down")
        return
    traced = protocol.traced and "id" in data and data.get("method") in protocol.traced
    token = request_trace.begin() if traced else None  # its tasks and callbacks inherit it
    try:
        if not _answer_now(ctx, message):
            protocol.handle_message(message)
    except Exception:
        log.exception("failed to dispatch a message")
        if "method" in data and "id" in data:
            _send_error(ctx, msg_id, -32603, "internal error while dispatching")
    finally:
        if token is not None:
            request_trace.end(token)


class Reply:
    """The answer to one request taken by an :data:`ANSWER_NOW` handler, written by
    whichever callback has it (the read's own, or the view process's pipe's): the same
    frame a handler's task would have written, without a task. Until it is given, the
    request is among the connection's ``_request_futures`` as a handler's task would be:
    the connection's end waits for it (``_drain``) and ``$/cancelRequest`` cancels it
    (answered as pygls answers a cancelled task)."""

    def __init__(self, protocol: BonsaiProtocol, method: str, msg_id: Any) -> None:
        self.protocol, self.method, self.msg_id = protocol, method, msg_id
        self.trace = request_trace.current()
        self.given = False
        self.pending: asyncio.Future[None] | None = None

    def wait(self) -> None:
        """The answer comes later: the request is pending until it is given."""
        if self.given:
            return
        pending = self.pending = asyncio.get_running_loop().create_future()
        cast(dict[Any, Any], self.protocol._request_futures)[self.msg_id] = pending
        pending.add_done_callback(self._cancelled)

    def send(self, result: Encoded) -> None:
        if not self._give():
            return
        if self.trace is not None:
            self.trace.mark("framed")
        self.protocol.send_frame(encoded_response(self.msg_id, result, self.trace))

    def fail(self, error: BaseException) -> None:
        """The error a handler's task would have answered; a cancelled one, pygls' own."""
        if not self._give():
            return
        if isinstance(error, Exception):
            rpc_error = to_rpc_error(self.method, error)
        else:
            rpc_error = JsonRpcRequestCancelled(f'Request with id "{self.msg_id}" is canceled')
        self.protocol._send_response(self.msg_id, error=rpc_error.to_response_error())

    def settle(self, value: Any, error: BaseException | None) -> None:
        """A computation's end, as a view hands it to each request waiting for it."""
        if self.trace is not None:
            self.trace.mark("back")
        if error is None:
            self.send(value)
        else:
            self.fail(error)

    def _give(self) -> bool:
        if self.given:
            return False
        self.given = True
        pending = self.pending
        if pending is not None:
            if self.protocol._request_futures.get(self.msg_id) is pending:
                del self.protocol._request_futures[self.msg_id]
            if not pending.done():
                pending.set_result(None)
        return True

    def _cancelled(self, pending: asyncio.Future[None]) -> None:
        if pending.cancelled():
            self.fail(asyncio.CancelledError())


# A read-only request answered from the read's callback when it can be: the handler is
# given the request's params and its Reply, and says whether it took the request (it
# answered, or a callback will); False: the request goes to its handler's task as usual.
AnswerNow = Callable[[Ctx, Any, Reply], bool]
ANSWER_NOW: dict[str, AnswerNow] = {}


def answers_now(name: str) -> Callable[[AnswerNow], AnswerNow]:
    """Register the task-less path of a read-only request (beside its :func:`handles`)."""

    def register(fn: AnswerNow) -> AnswerNow:
        ANSWER_NOW[name] = fn
        return fn

    return register


def _answer_now(ctx: Ctx, message: Any) -> bool:
    """Whether ``message`` was taken by its task-less path. Never for a connection shut
    down, not yet authenticated or with a mutating request not yet begun (the answer
    must see what the connection asked before it); bad params go the usual way, to
    get the usual error."""
    if type(message) is not JsonRPCRequestMessage:
        return False
    answer = ANSWER_NOW.get(message.method)
    protocol = ctx.protocol
    if answer is None or protocol._shutdown or protocol.unstarted:
        return False
    if not ctx.connection.authenticated or message.method not in READ_ONLY:
        return False
    if message.id in protocol._request_futures:
        return False  # an id still in use: pygls' own bookkeeping decides
    raw = {} if message.params is None else message.params
    if not isinstance(raw, dict) or params_problem(raw) is not None:
        return False
    try:
        params = BY_NAME[message.method].params.model_validate(raw)
    except ValidationError:
        return False
    reply = Reply(protocol, message.method, message.id)
    try:
        taken = answer(ctx, params, reply)
    except Exception as error:  # taken, then failed: answered with the error
        reply.fail(error)
        return True
    if taken:
        reply.wait()
    return taken


class _Served:
    """One connection as :class:`~bonsai.daemon.reader.FramedReader` serves it."""

    def __init__(self, ctx: Ctx, close: Callable[[], None]) -> None:
        self.ctx, self.close = ctx, close
        self.finished: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._ending: asyncio.Task[None] | None = None

    def body(self, data: bytes) -> None:
        handle_body(self.ctx, data)

    def broken(self, error: framing.FrameError) -> None:
        log.warning("closing client %s: %s", self.ctx.connection.id, error)
        _send_error(self.ctx, None, -32700, f"Parse error: {error}; closing the connection")

    def ended(self) -> None:
        if self._ending is None:
            self._ending = asyncio.ensure_future(self._end())

    async def _end(self) -> None:
        try:
            await _drain(self.ctx.protocol)
        finally:
            self.ctx.daemon.remove_connection(self.ctx.connection)
            self.close()
            if not self.finished.done():
                self.finished.set_result(None)


def _open(
    daemon: Daemon, kind: str, writer: Writer, close: Callable[[], None], token: str | None
) -> _Served:
    ctx = build_server(daemon, kind, writer, close)
    if token is not None:
        ctx.protocol.token = token
        ctx.connection.authenticated = False
    return _Served(ctx, close)


class ServedReader(FramedReader):
    """A client's connection (the local socket, TCP, a pipe): served from its transport's
    read callback. ``admit`` may refuse it at once (another user's); ``write`` replaces
    the transport's (stdio answers on stdout); ``on_close`` follows its close."""

    def __init__(
        self,
        daemon: Daemon,
        kind: str,
        token: str | None = None,
        admit: Callable[[asyncio.BaseTransport], bool] | None = None,
        write: Callable[[bytes], Any] | None = None,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        super().__init__()
        self.daemon, self.kind, self.token, self.admit = daemon, kind, token, admit
        self.write, self.on_close = write, on_close
        self.served: _Served | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        if self.admit is not None and not self.admit(transport):
            transport.close()
            return

        def close() -> None:
            if not transport.is_closing():
                transport.close()
            if self.on_close is not None:
                self.on_close()

        write = self.write or cast(asyncio.WriteTransport, transport).write
        self.served = self.endpoint = _open(
            self.daemon, self.kind, Writer(write, close), close, self.token
        )


async def serve_stream(
    daemon: Daemon,
    kind: str,
    reader: asyncio.StreamReader,
    writer: Writer,
    close: Callable[[], None],
    token: str | None = None,
) -> None:
    """Serve one client handed over as a stream reader (tests, benches) until it
    disconnects, sends ``exit`` or breaks framing: the same reader and dispatch as a
    socket's (:class:`ServedReader`), fed from the stream."""
    served = _open(daemon, kind, writer, close, token)
    framed = FramedReader(served)
    feeding = asyncio.ensure_future(feed_from(reader, framed))
    try:
        await served.finished  # its end, an exit or a broken frame: no more is read
    finally:
        feeding.cancel()
        if not served.finished.done():  # this task cancelled: the connection ends too
            framed.connection_lost(None)
            await served.finished


async def _drain(protocol: BonsaiProtocol, timeout: float = 10.0) -> None:
    """Let requests already received finish (their answers are still wanted);
    cancel our own requests to the client, which can no longer answer."""
    handlers: list[asyncio.Future[Any]] = []
    for future in list(protocol._request_futures.values()):
        if isinstance(future, asyncio.Future):
            handlers.append(future)
        else:
            future.cancel()
    if handlers:
        await asyncio.wait(handlers, timeout=timeout)
