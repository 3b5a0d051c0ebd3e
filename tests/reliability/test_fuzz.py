"""Hypothesis fuzzing of the daemon's JSON-RPC surface, over its real unix socket.

Every example runs against one live ``bonsai serve --socket`` (turns go to the
provider simulator) and checks the wire contract:

* a well-framed request gets exactly one response with its id: a result, or an
  error with a JSON-RPC code and a non-empty message; params the method table's
  model rejects get -32602, unknown methods -32601, and no handler crashes
  (-32603);
* a notification gets no response; a bad body gets at most one error and the
  connection goes on; a broken frame ends that connection only;
* after each example a bystander connection still answers
  ``bonsai/daemon/status`` and the daemon process is alive.

Generation is derandomized (CI reproduces any failure). ``bench/fuzz.py`` runs
the same strategies for 10,000+ messages.
"""

from __future__ import annotations

import json
import os
import socket
import time
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from bonsai.daemon.rpc import MAX_PARAMS_DEPTH, params_problem
from bonsai.protocol.methods import METHODS, Method, requests
from bonsai.settings import Settings
from bonsai.sim import Script
from bonsai.sim.runner import SimulatorThread
from bonsai.sim.script import Reply, Rule
from bonsai_testing import bonsai_env
from reliability.raw_client import DaemonProcess, Message, Raw, frame, request

MISSING: Any = object()  # params left out of the envelope
DEEP = "\u2063deep\u2063"  # placeholder replaced by a deeply nested array in the body
FUZZED = [m for m in requests() if m.name != "bonsai/daemon/stop"]
NOT_REQUESTS = [m.name for m in METHODS if m.direction != "request"]
UNKNOWN = [
    "bonsai/nope",
    "bonsai/session",
    "bonsai/",
    "nope/nope",
    "",
    "BONSAI/daemon/status",
    "$/nope",
]
LSP_REQUESTS = ["initialize", "shutdown", "textDocument/hover", "workspace/symbol"]
LSP_NOTIFICATIONS = ["initialized", "exit", "$/cancelRequest", "textDocument/didOpen"]
# JSON-RPC's reserved ranges: predefined, implementation-defined, LSP-reserved.
PREDEFINED = {-32700, -32600, -32601, -32602, -32603}
# What a handler may answer for params its model accepts: never -32603 (a crash).
DOMAIN_CODES = {-32000, -32001, -32004, -32009, -32602}
DEEP_DEPTHS = [MAX_PARAMS_DEPTH + 1, 300, 900, 10_000]
# Longest text sent at exactly a field's limit (covers `mentions`, 64 KiB; the
# larger `text` and `content` limits are probed one character over only).
AT_LIMIT_MAX = 65_536
TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Targets:
    """Things the strategies aim at: real sessions, a sandbox for paths."""

    sandbox: Path
    live: str
    deleted: str
    node_ids: tuple[str, ...]
    random_paths: bool = True  # False: only three fixed workspaces/paths


@dataclass(frozen=True)
class Case:
    """One generated message and what its answer must be."""

    data: bytes
    method: str
    msg_id: int | str | None  # None: a notification
    expect: frozenset[int] | None  # error codes the answer must carry; None: result or domain

    def __repr__(self) -> str:  # hypothesis prints failing cases: keep them short
        return f"Case({self.method!r}, id={self.msg_id!r}, {self.data[:300]!r}...)"


def valid_code(code: Any) -> bool:
    if not isinstance(code, int) or isinstance(code, bool):
        return False
    return code in PREDEFINED or -32099 <= code <= -32000 or -32899 <= code <= -32800


# ------------------------------------------------------------------ values
def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4)


JSON_VALUES: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    _containers,
    max_leaves=10,
)


EDGE_TEXT = ["", " ", "\x00", "\ud800", "a\udfffb", "..", "../../etc/passwd", "\u202e", "null"]
SAFE_PATH_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="/."), max_size=24)
CONFIG_KEYS = sorted(
    f"{section}.{key}"
    for section, field in Settings.model_fields.items()
    if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)
    for key in field.annotation.model_fields
)


def _max_len(field: FieldInfo) -> int | None:
    return next((m.max_length for m in field.metadata if hasattr(m, "max_length")), None)


def _text(name: str, field: FieldInfo, targets: Targets) -> st.SearchStrategy[str]:
    limit = _max_len(field)
    big = [limit + 1] if limit else [100_000]
    if limit and limit <= AT_LIMIT_MAX:
        big.append(limit)
    words = st.text(max_size=40)
    plain = st.one_of(
        words, words, words, st.sampled_from(EDGE_TEXT), st.sampled_from(big).map("x".__mul__)
    )
    if name == "session_id":
        live = st.just(targets.live)
        others = st.sampled_from([targets.deleted, "s_0123456789abcdef"])
        return st.one_of(live, live, live, others, plain)
    if name in ("workspace", "path"):
        fixed = st.sampled_from([str(targets.sandbox), "missing", "AGENTS.md"])
        if not targets.random_paths:
            return fixed
        return fixed | SAFE_PATH_TEXT.map(lambda t: str(targets.sandbox / t) if t else t)
    if name == "name":
        return st.sampled_from(["fuzz-note", "a", "../x", "/abs", "Bad Name", "x.md"]) | plain
    if name == "key":
        return st.sampled_from(CONFIG_KEYS) | plain
    if name == "node_id":
        return st.sampled_from(targets.node_ids or ("none",)) | plain
    return plain


def _int() -> st.SearchStrategy[int]:
    edges = st.sampled_from([0, 1, -1, 2**31, 2**63, -(2**63) - 1, 10**30])
    return st.integers(-5, 100) | st.integers() | edges


def valid_value(name: str, field: FieldInfo, targets: Targets) -> st.SearchStrategy[Any]:
    """A value of the field's own type (not necessarily inside its limits)."""
    return _of_type(field.annotation, name, field, targets)


def _of_type(tp: Any, name: str, field: FieldInfo, targets: Targets) -> st.SearchStrategy[Any]:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Literal:
        return st.sampled_from(args)
    if args and type(None) in args:  # Optional
        inner = [_of_type(a, name, field, targets) for a in args if a is not type(None)]
        return st.one_of(st.none(), *inner)
    if tp is str:
        return _text(name, field, targets)
    if tp is bool:
        return st.booleans()
    if tp is int:
        return _int()
    return JSON_VALUES


@st.composite
def param_objects(draw: st.DrawFn, model: type[BaseModel], targets: Targets) -> dict[str, Any]:
    """An object for ``model``: each field valid, wrongly typed, snake_cased or left out."""
    params: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        key = field.alias or name
        roll = draw(st.integers(0, 19))
        if roll == 0:
            continue
        if roll == 1:
            params[key] = draw(JSON_VALUES)
        elif roll == 2:
            params[name] = draw(valid_value(name, field, targets))
        else:
            params[key] = draw(valid_value(name, field, targets))
    if draw(st.integers(0, 11)) == 0:
        params[draw(st.text(min_size=1, max_size=12))] = draw(JSON_VALUES)
    if params and draw(st.integers(0, 15)) == 0:
        params[draw(st.sampled_from(sorted(params)))] = DEEP
    return params


def _deep(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def encode_body(payload: dict[str, Any], depth: int) -> bytes:
    body = json.dumps(payload).encode()
    return body.replace(json.dumps(DEEP).encode(), _deep(depth))


# ------------------------------------------------------------------ cases
def expected(method: Method | None, params: Any, depth: int) -> frozenset[int] | None:
    """The error codes the daemon must answer with, from the method table alone."""
    if method is None:
        return None
    raw = {} if params is MISSING or params is None else params
    if not isinstance(raw, dict):
        return frozenset({-32602})
    if DEEP in raw.values():
        # nested beyond the params limit; past the JSON parser's own limit it is a parse error
        return frozenset({-32602, -32700}) if depth > MAX_PARAMS_DEPTH else None
    if params_problem(raw) is not None:
        return frozenset({-32602})
    try:
        method.params.model_validate(raw)
    except ValidationError:
        return frozenset({-32602})
    except ValueError:  # e.g. a string pydantic cannot decode
        return frozenset({-32602})
    return None


def _ids() -> st.SearchStrategy[int | str]:
    return st.integers(-(2**53), 2**53) | st.text(max_size=12).map(lambda t: "id-" + t)


@st.composite
def request_cases(draw: st.DrawFn, targets: Targets) -> Case:
    """A well-framed request: a table method (mostly), an unknown one, or an LSP one."""
    kind = draw(st.integers(0, 9))
    method: Method | None = None
    if kind <= 6:
        method = draw(st.sampled_from(FUZZED))
        name = method.name
    elif kind == 7:
        # "x-" keeps random names unknown: hypothesis also tries string constants
        # of the code under test, such as "bonsai/daemon/stop"
        random_name = st.text(max_size=20).map("x-".__add__)
        name = draw(st.sampled_from(UNKNOWN + NOT_REQUESTS) | random_name)
    else:
        name = draw(st.sampled_from(LSP_REQUESTS))
    if method is not None and draw(st.integers(0, 9)) > 0:
        params: Any = draw(param_objects(method.params, targets))
    else:
        params = draw(st.just(MISSING) | JSON_VALUES)
    if name == "bonsai/session/delete" and isinstance(params, dict):
        for key in ("sessionId", "session_id"):
            if params.get(key) == targets.live:  # keep the live session for later examples
                params[key] = targets.deleted
    msg_id = draw(_ids())
    payload: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": name}
    if params is not MISSING:
        payload["params"] = params
    depth = draw(st.sampled_from(DEEP_DEPTHS))
    codes = expected(method, params, depth) if name in BY_KNOWN else frozenset({-32601})
    return Case(frame(encode_body(payload, depth)), name, msg_id, codes)


BY_KNOWN = {m.name for m in FUZZED} | set(LSP_REQUESTS)


@st.composite
def notification_cases(draw: st.DrawFn, targets: Targets) -> Case:
    names = [m.name for m in FUZZED if m.name != "bonsai/session/delete"]
    name = draw(st.sampled_from(names + LSP_NOTIFICATIONS + UNKNOWN))
    method = next((m for m in FUZZED if m.name == name), None)
    params = draw(param_objects(method.params, targets)) if method else draw(JSON_VALUES)
    payload = {"jsonrpc": "2.0", "method": name, "params": params}
    return Case(frame(encode_body(payload, MAX_PARAMS_DEPTH + 1)), name, None, None)


def _invalid_utf8(data: bytes) -> bytes:
    return b'{"jsonrpc": "2.0", "id": 1, "method": "\xff' + data + b'"}'


BAD_ENVELOPES: list[Any] = [
    {"jsonrpc": "1.0", "id": 1, "method": "bonsai/daemon/status"},
    {"id": 1, "method": "bonsai/daemon/status"},
    {"jsonrpc": "2.0", "id": 1.5, "method": "bonsai/daemon/status"},
    {"jsonrpc": "2.0", "id": True, "method": "bonsai/daemon/status"},
    {"jsonrpc": "2.0", "id": [1], "method": "bonsai/daemon/status"},
    {"jsonrpc": "2.0", "id": 1, "method": 7},
    {"jsonrpc": "2.0", "id": 1, "method": None},
    {"jsonrpc": "2.0", "id": 424242, "result": {}},
    {"jsonrpc": "2.0", "id": 424243, "error": {"code": 1, "message": "x"}},
    {"jsonrpc": "2.0"},
    {},
]


def bad_bodies() -> st.SearchStrategy[bytes]:
    """Well-framed bodies that are not a valid request: one error at most, then go on."""
    not_json = st.text(max_size=60).filter(_not_json).map(str.encode)
    non_objects = JSON_VALUES.filter(lambda v: not isinstance(v, dict)).map(_dumps)
    envelopes = st.sampled_from(BAD_ENVELOPES).map(_dumps) | JSON_VALUES.map(_dumps)
    return st.one_of(
        st.binary(max_size=60).map(_invalid_utf8),
        not_json,
        non_objects,
        envelopes,
        st.sampled_from([10_000, 100_000]).map(_deep),
    ).map(frame)


def _dumps(value: Any) -> bytes:
    return json.dumps(value).encode()


def _not_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return True
    return False


def broken_frames() -> st.SearchStrategy[bytes]:
    """Byte streams whose framing breaks: the daemon must end that connection."""
    value = st.sampled_from([b"nope", b"-1", b"1e3", b"99999999999", b"67108865", b"", b"0x10"])
    body = st.binary(max_size=40)
    return st.one_of(
        st.tuples(value, body).map(lambda vb: b"Content-Length: " + vb[0] + b"\r\n\r\n" + vb[1]),
        body.map(lambda b: b"X-Other: 1\r\n\r\n" + b),
        st.binary(min_size=1, max_size=40)
        .filter(lambda b: b":" not in b and b"\n" not in b)
        .map(lambda b: b + b"\r\n\r\n"),
        st.integers(10, 1000).map(lambda n: b"Content-Length: %d\r\n\r\n{" % n),
        st.just(b"X: " + b"a" * (1 << 21) + b"\r\n\r\n"),
        st.binary(max_size=200),
    )


# ------------------------------------------------------------------ checks
def collect(raw: Raw, msg_id: int | str | None) -> list[Message]:
    """Every response the daemon sends for what was just written.

    A status sentinel marks where the synchronous answers end (bad bodies and
    parse errors are answered in order, with a null id); a handler's answer
    may come later, so it is awaited by its id (up to the socket timeout). A
    second sentinel then gives a late duplicate the chance to show."""
    raw.send(request("sentinel-a", "bonsai/daemon/status"))
    seen = raw.responses_until("sentinel-a")
    if msg_id is not None and not any(m.get("id") in (msg_id, None) for m in seen):
        seen += raw.responses_until(msg_id)
    raw.send(request("sentinel-b", "bonsai/daemon/status"))
    seen += raw.responses_until("sentinel-b")
    return [m for m in seen if not str(m.get("id")).startswith("sentinel-")]


def check_shape(answer: Message) -> None:
    assert answer.get("jsonrpc") == "2.0", answer
    assert ("result" in answer) != ("error" in answer), answer
    if "error" in answer:
        error = answer["error"]
        assert valid_code(error.get("code")), answer
        assert isinstance(error.get("message"), str) and error["message"].strip(), answer


def check_request(rig: Rig, case: Case) -> list[Message]:
    """Check the answers to a request or notification; return them."""
    with Raw(rig.daemon.socket, TIMEOUT_S) as raw:
        raw.send(case.data)
        try:
            answers = collect(raw, case.msg_id)
        except ConnectionError:
            assert case.method == "exit", f"{case.method} closed the connection"
            return []
    for answer in answers:
        check_shape(answer)
    if case.msg_id is None:
        assert answers == [], f"a notification got an answer: {answers}"
        return answers
    mine = [a for a in answers if a.get("id") == case.msg_id]
    others = [a for a in answers if a.get("id") != case.msg_id]
    if case.expect and -32700 in case.expect:
        assert len(answers) == 1, answers
        answer = answers[0]
        assert answer.get("id") in (case.msg_id, None), answer
    else:
        assert len(mine) == 1 and not others, f"want one answer with id {case.msg_id}: {answers}"
        answer = mine[0]
    error = answer.get("error")
    if case.expect is not None:
        assert error is not None and error["code"] in case.expect, answer
    elif error is not None and case.method in {m.name for m in FUZZED}:
        assert error["code"] in DOMAIN_CODES, f"handler failed on valid params: {answer}"
    return answers


def check_bad_body(rig: Rig, data: bytes) -> list[Message]:
    with Raw(rig.daemon.socket, TIMEOUT_S) as raw:
        raw.send(data)
        answers = collect(raw, None)
    assert len(answers) <= 1, answers
    for answer in answers:
        check_shape(answer)
    return answers


def check_broken_frame(rig: Rig, data: bytes) -> list[Message]:
    with Raw(rig.daemon.socket, TIMEOUT_S) as raw:
        try:
            raw.send(data)
            raw.sock.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the daemon already hung up on the bad header
        try:
            received = raw.drain_to_eof()
        except ConnectionResetError:
            received = []
    answers = [m for m in received if "method" not in m]  # broadcasts may come first
    for answer in answers:
        check_shape(answer)
    return answers


def check_bystander(rig: Rig) -> None:
    assert rig.daemon.alive(), "the daemon process died"
    rig.checks += 1
    assert rig.bystander.status(f"bystander-{rig.checks}")["version"]


# ------------------------------------------------------------------ the rig
@dataclass
class Rig:
    daemon: DaemonProcess
    bystander: Raw
    targets: Targets
    root: Path
    checks: int = 0


def _setup_sessions(raw: Raw, sandbox: Path) -> Targets:
    def result(msg_id: int, method: str, params: dict[str, Any]) -> Any:
        reply = raw.call(msg_id, method, params)
        assert "result" in reply, reply
        return reply["result"]

    live = result(1, "bonsai/session/create", {"workspace": str(sandbox), "title": "live"})
    gone = result(2, "bonsai/session/create", {"workspace": str(sandbox)})
    result(3, "bonsai/session/delete", gone)
    result(4, "bonsai/session/append", {**live, "role": "user", "content": "hello"})
    nodes = result(5, "bonsai/ctx/get", live)["nodes"]
    ids = tuple(n["id"] for n in nodes)
    return Targets(sandbox, live["sessionId"], gone["sessionId"], ids)


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    root = tmp_path_factory.mktemp("fuzz")
    home, sandbox = root / "home", root / "sandbox"
    home.mkdir()
    sandbox.mkdir()
    (sandbox / "AGENTS.md").write_text("# Notes\nBe brief.\n")
    (sandbox / "app.py").write_text("def answer():\n    return 42\n")
    script = Script(rules=[Rule(match="", reply=Reply(text="ok"))])
    with SimulatorThread(script) as sim:
        env = bonsai_env(
            home,
            BONSAI_PROVIDER="sim",
            BONSAI_BASE_URL=sim.openai_base_url,
            BONSAI_MODEL="gpt-4o-mini",
            BONSAI_MEMORY_EMBEDDINGS="off",
        )
        daemon = DaemonProcess(home, env, cwd=sandbox)
        bystander = Raw(daemon.socket, TIMEOUT_S)
        try:
            targets = _setup_sessions(bystander, sandbox)
            yield Rig(daemon, bystander, targets, root)
        finally:
            bystander.close()
            code = daemon.stop()
        assert code == 0, f"daemon exit code {code}"


def assert_contained(rig: Rig) -> None:
    """Fuzzed paths stayed in the sandbox; the daemon logged no handler crash."""
    assert sorted(p.name for p in rig.root.iterdir()) == ["home", "sandbox"]
    log = rig.daemon.log_text()
    crashed = [line for line in log.splitlines() if "ERROR bonsai.rpc" in line]
    assert not crashed, crashed[:5]


FUZZ = settings(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)


# ------------------------------------------------------------------ tests
def test_fuzzed_requests_get_exactly_one_well_formed_answer(rig: Rig) -> None:
    @settings(FUZZ, max_examples=int(os.environ.get("BONSAI_FUZZ_EXAMPLES", "220")))
    @given(case=request_cases(rig.targets))
    def run(case: Case) -> None:
        check_request(rig, case)
        check_bystander(rig)

    run()
    assert_contained(rig)


def test_fuzzed_notifications_get_no_answer(rig: Rig) -> None:
    @settings(FUZZ, max_examples=40)
    @given(case=notification_cases(rig.targets))
    def run(case: Case) -> None:
        check_request(rig, case)
        check_bystander(rig)

    run()
    assert_contained(rig)


def test_bad_bodies_get_at_most_one_error_and_the_connection_goes_on(rig: Rig) -> None:
    @settings(FUZZ, max_examples=60)
    @given(data=bad_bodies())
    def run(data: bytes) -> None:
        check_bad_body(rig, data)
        check_bystander(rig)

    run()


def test_broken_frames_close_only_their_connection(rig: Rig) -> None:
    @settings(FUZZ, max_examples=50)
    @given(data=broken_frames())
    def run(data: bytes) -> None:
        check_broken_frame(rig, data)
        check_bystander(rig)

    run()


# found by bench/fuzz.py: mention parsing was quadratic on a long unbroken word
def test_long_unbroken_mention_does_not_freeze_the_daemon(rig: Rig) -> None:
    sandbox = str(rig.targets.sandbox)
    with Raw(rig.daemon.socket, TIMEOUT_S) as raw:
        assert "result" in raw.call(1, "bonsai/repomap/get", {"workspace": sandbox})
        raw.send(request(2, "bonsai/repomap/get", {"workspace": sandbox, "mentions": "x" * 12_000}))
        time.sleep(0.2)
        start = time.monotonic()
        rig.bystander.status("during-mentions")
        waited = time.monotonic() - start
        assert "result" in raw.responses_until(2)[-1]
    assert waited < 1.0, f"a status request waited {waited:.1f} s behind one repomap/get"


# ------------------------------------------------------------------ found by fuzzing
def _ask(rig: Rig, method: str, params: Any) -> Message:
    with Raw(rig.daemon.socket, TIMEOUT_S) as raw:
        return raw.call("q", method, params)


def _deep_value(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


FOUND = [
    # a 300-deep config value was stored, then every config/get failed
    ("bonsai/config/set", {"key": "context.x", "value": _deep_value(300)}, -32602, "deeper"),
    # unpaired surrogates passed unconstrained fields and crashed SQLite lookups
    ("bonsai/repomap/get", {"sessionId": "a\udfffb"}, -32602, "sessionId: text holds"),
    ("bonsai/session/list", {"workspace": "\ud800"}, -32602, "unpaired surrogate"),
    # file-system errors from a path the client gave were internal errors
    (
        "bonsai/memory/add",
        {"workspace": "AGENTS.md", "fact": "f", "tier": "project"},
        -32602,
        "Not a directory",
    ),
    ("bonsai/session/import", {"path": "a\x00b", "workspace": "w"}, -32602, "NUL"),
]


@pytest.mark.parametrize(("method", "params", "code", "fragment"), FOUND)
def test_bad_params_found_by_fuzzing_get_clear_errors(
    rig: Rig, method: str, params: Any, code: int, fragment: str
) -> None:
    answer = _ask(rig, method, params)
    assert answer["error"]["code"] == code and fragment in answer["error"]["message"], answer
    check_bystander(rig)


def test_config_still_reads_after_a_refused_deep_value(rig: Rig) -> None:
    _ask(rig, "bonsai/config/set", {"key": "context.x", "value": _deep_value(300)})
    assert "result" in _ask(rig, "bonsai/config/get", {})


def test_requests_after_shutdown_are_refused_on_that_connection_only(rig: Rig) -> None:
    with Raw(rig.daemon.socket, TIMEOUT_S) as raw:
        assert raw.call(1, "shutdown")["result"] is None
        refused = raw.call(2, "bonsai/daemon/status")
        assert refused["error"]["code"] == -32600 and "shut down" in refused["error"]["message"]
    check_bystander(rig)


@pytest.mark.parametrize(
    ("method", "extra"),
    [
        ("bonsai/session/attach", {}),
        ("bonsai/session/append", {"role": "user", "content": "x"}),
        ("bonsai/chat/send", {"text": "x"}),
        ("bonsai/ctx/get", {}),
        ("bonsai/episodes/list", {}),
        ("bonsai/session/rename", {"title": "t"}),
    ],
)
def test_a_deleted_session_is_not_found(rig: Rig, method: str, extra: dict[str, Any]) -> None:
    answer = _ask(rig, method, {"sessionId": rig.targets.deleted, **extra})
    assert answer["error"]["code"] == -32004, answer
    assert rig.targets.deleted in answer["error"]["message"]
