"""What an OpenAI-compatible server says about the model it serves.

Local servers know their real context window; the model's name does not. Each
server exposes it differently, so bonsai asks the places each one answers, in
a fixed order, with short timeouts, and keeps what it found per base URL and
model:

- llama.cpp ``llama-server``: ``GET /props`` (``default_generation_settings.n_ctx``;
  tools from ``chat_template_caps.supports_tool_calls``); newer builds also put
  ``meta.n_ctx`` in ``GET /v1/models``.
- vLLM: ``GET /v1/models`` ``max_model_len``; tool support is not exposed.
- LM Studio: ``GET /api/v0/models/<model>`` ``loaded_context_length``, else
  ``max_context_length``; tools when ``capabilities`` has ``tool_use``.
- Ollama: ``POST /api/show`` (the ``num_ctx`` parameter, ``capabilities`` has
  ``tools``), else ``GET /api/ps`` (a loaded model's ``context_length``), else
  Ollama's default context, capped by the model's trained length.
- llama-cpp-python: ``GET /v1/models`` answers (``owned_by: me``) but exposes
  neither the window nor tool support.

Parsers are pure functions of the JSON a server returned (tested against each
shape); ``discover`` does the I/O. Nothing here raises: a server that answers
nothing useful gives ``ServerFacts`` with ``window=None``.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ConfigDict

from bonsai.services.providers.tls import ssl_context

log = logging.getLogger("bonsai.providers")

ServerKind = Literal["llama.cpp", "vllm", "lmstudio", "ollama", "llama-cpp-python", "unknown"]
PROBE_TIMEOUT_S = 3.0
CACHE_TTL_S = 300.0
# Ollama allocates 4k of context on machines with < 24 GiB of VRAM unless told
# otherwise (num_ctx in the Modelfile, OLLAMA_CONTEXT_LENGTH); a window we cannot
# see is assumed to be that, never the model's training maximum.
OLLAMA_DEFAULT_CTX = 4_096


class ServerFacts(BaseModel):
    """Model facts one server exposed. ``None`` means "not exposed"."""

    model_config = ConfigDict(frozen=True)

    server: ServerKind = "unknown"
    window: int | None = None
    window_source: str = ""  # e.g. "llama.cpp GET /props default_generation_settings.n_ctx"
    tools: bool | None = None  # does the model's chat template / server support tool calls?
    tools_source: str = ""
    tools_probed: bool = False  # ``tools`` came from a probe request (tool_probe), not a fact
    stream_tools: bool | None = None  # can it stream a tool call it chose (tool_choice auto)?
    stream_tools_source: str = ""
    text_tools: bool | None = None  # did the model follow the text tool protocol in a probe?
    text_tools_source: str = ""
    note: str = ""  # a caveat about the window (e.g. Ollama's default)
    served_model: str | None = None  # the one model ``GET /v1/models`` lists, when it lists one
    served_models: tuple[str, ...] = ()  # every model it lists, when it lists several
    reachable: bool = True


def _positive_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value > 0:
        return value
    if isinstance(value, float) and value.is_integer() and value > 0:
        return int(value)
    return None


def server_root(base_url: str) -> str:
    """``http://host:port/v1`` → ``http://host:port`` (the non-OpenAI paths live there)."""
    base = base_url.rstrip("/")
    return re.sub(r"/v1$", "", base)


def same_model(entry_id: Any, model: str) -> bool:
    if not isinstance(entry_id, str):
        return False
    a, b = entry_id.strip().lower(), model.strip().lower()
    return a == b or a.rsplit("/", 1)[-1] == b.rsplit("/", 1)[-1]


def _model_entry(body: Any, model: str) -> dict[str, Any] | None:
    """The ``/v1/models`` entry of ``model``; the only entry when the server serves one."""
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return None
    entries = [e for e in data if isinstance(e, dict)]
    for entry in entries:
        if same_model(entry.get("id"), model):
            return entry
    return entries[0] if len(entries) == 1 else None


def _listed(body: Any) -> list[str]:
    data = body.get("data") if isinstance(body, dict) else None
    ids = [e.get("id") for e in data if isinstance(e, dict)] if isinstance(data, list) else []
    return [i for i in ids if isinstance(i, str) and i]


def parse_models(body: Any, model: str) -> ServerFacts:
    """``GET /v1/models``: vLLM's ``max_model_len``, llama.cpp's ``meta.n_ctx``, and
    who answers (``owned_by``)."""
    facts = _parse_models(body, model)
    listed = _listed(body)
    if len(listed) == 1:
        return facts.model_copy(update={"served_model": listed[0]})
    if len(listed) > 1:
        return facts.model_copy(update={"served_models": tuple(listed)})
    return facts


def _parse_models(body: Any, model: str) -> ServerFacts:
    entry = _model_entry(body, model)
    if entry is None:
        return ServerFacts()
    owner = str(entry.get("owned_by") or "").lower()
    vllm_len = _positive_int(entry.get("max_model_len"))
    if vllm_len is not None:
        return ServerFacts(
            server="vllm", window=vllm_len, window_source="vLLM GET /v1/models max_model_len"
        )
    meta = entry.get("meta")
    n_ctx = _positive_int(meta.get("n_ctx")) if isinstance(meta, dict) else None
    if n_ctx is not None:
        return ServerFacts(
            server="llama.cpp", window=n_ctx, window_source="llama.cpp GET /v1/models meta.n_ctx"
        )
    if owner == "llamacpp":
        return ServerFacts(server="llama.cpp")
    if owner == "me":  # llama-cpp-python's server: it exposes no window
        return ServerFacts(server="llama-cpp-python")
    return ServerFacts()


def parse_props(body: Any) -> ServerFacts:
    """llama.cpp ``GET /props``: the per-slot context and the chat template's caps."""
    if not isinstance(body, dict):
        return ServerFacts()
    settings = body.get("default_generation_settings")
    n_ctx = _positive_int(settings.get("n_ctx")) if isinstance(settings, dict) else None
    n_ctx = n_ctx or _positive_int(body.get("n_ctx"))
    caps = body.get("chat_template_caps")
    tools, tools_source = None, ""
    template = body.get("chat_template")
    if isinstance(caps, dict) and isinstance(caps.get("supports_tool_calls"), bool):
        tools = bool(caps["supports_tool_calls"])
        tools_source = "llama.cpp GET /props chat_template_caps.supports_tool_calls"
    elif isinstance(template, str) and template.strip():
        # older builds publish the template without caps: a template that never
        # mentions tools cannot render them for the model
        tools = "tools" in template or "tool_calls" in template
        tools_source = "llama.cpp GET /props chat_template " + (
            "(renders tools)" if tools else "(never mentions tools)"
        )
    if n_ctx is None and tools is None:
        return ServerFacts()
    return ServerFacts(
        server="llama.cpp",
        window=n_ctx,
        window_source="llama.cpp GET /props default_generation_settings.n_ctx" if n_ctx else "",
        tools=tools,
        tools_source=tools_source,
    )


def parse_lmstudio(body: Any) -> ServerFacts:
    """LM Studio ``GET /api/v0/models/<model>``."""
    if not isinstance(body, dict) or body.get("object") != "model":
        return ServerFacts()
    caps = body.get("capabilities")
    tools = ("tool_use" in caps) if isinstance(caps, list) else None
    tools_source = "LM Studio GET /api/v0/models capabilities" if tools is not None else ""
    loaded = _positive_int(body.get("loaded_context_length"))
    if loaded is not None:
        return ServerFacts(
            server="lmstudio",
            window=loaded,
            window_source="LM Studio GET /api/v0/models loaded_context_length",
            tools=tools,
            tools_source=tools_source,
        )
    maximum = _positive_int(body.get("max_context_length"))
    if maximum is None:
        return ServerFacts(server="lmstudio", tools=tools, tools_source=tools_source)
    return ServerFacts(
        server="lmstudio",
        window=maximum,
        window_source="LM Studio GET /api/v0/models max_context_length",
        tools=tools,
        tools_source=tools_source,
        note="the model is not loaded: LM Studio may load it with a smaller context; "
        "set providers.models.<model>.context_window to be sure",
    )


def _num_ctx(parameters: Any) -> int | None:
    if not isinstance(parameters, str):
        return None
    match = re.search(r"^\s*num_ctx\s+(\d+)\s*$", parameters, re.MULTILINE)
    return int(match.group(1)) if match else None


def _trained_ctx(model_info: Any) -> int | None:
    if not isinstance(model_info, dict):
        return None
    for key, value in model_info.items():
        if isinstance(key, str) and key.endswith(".context_length"):
            return _positive_int(value)
    return None


def _loaded_ctx(ps: Any, model: str) -> int | None:
    models = ps.get("models") if isinstance(ps, dict) else None
    for entry in models if isinstance(models, list) else []:
        if isinstance(entry, dict) and (
            same_model(entry.get("name"), model) or same_model(entry.get("model"), model)
        ):
            return _positive_int(entry.get("context_length"))
    return None


def parse_ollama(show: Any, ps: Any, model: str) -> ServerFacts:
    """Ollama ``POST /api/show`` (and ``GET /api/ps`` for a loaded model).

    The window a request gets is ``num_ctx``: the Modelfile's parameter when
    set, else what the loaded runner allocated, else Ollama's default (4k on
    small machines) — capped by the model's trained length."""
    if not isinstance(show, dict) or not (
        "model_info" in show or "parameters" in show or "capabilities" in show
    ):
        return ServerFacts()
    caps = show.get("capabilities")
    tools = ("tools" in caps) if isinstance(caps, list) else None
    tools_source = "Ollama POST /api/show capabilities" if tools is not None else ""
    trained = _trained_ctx(show.get("model_info"))
    param = _num_ctx(show.get("parameters"))
    loaded = _loaded_ctx(ps, model)
    if param is not None:
        window, source, note = param, "Ollama POST /api/show parameters num_ctx", ""
    elif loaded is not None:
        window, source, note = loaded, "Ollama GET /api/ps context_length (loaded model)", ""
    else:
        window, source = OLLAMA_DEFAULT_CTX, "Ollama's default context (no num_ctx set)"
        note = (
            f"Ollama gives a model {OLLAMA_DEFAULT_CTX:,} tokens unless told otherwise: "
            "set num_ctx in its Modelfile or OLLAMA_CONTEXT_LENGTH for more"
        )
    if trained is not None and trained < window:
        window, source = trained, "Ollama POST /api/show model_info context_length"
    return ServerFacts(
        server="ollama",
        window=window,
        window_source=source,
        tools=tools,
        tools_source=tools_source,
        note=note,
    )


def merge(first: ServerFacts, later: ServerFacts) -> ServerFacts:
    """Facts from two probes: the first window found wins; tool facts fill in."""
    update: dict[str, Any] = {}
    if first.server == "unknown" and later.server != "unknown":
        update["server"] = later.server
    if first.window is None and later.window is not None:
        update |= {"window": later.window, "window_source": later.window_source}
        update["note"] = later.note
    if first.tools is None and later.tools is not None:
        update |= {"tools": later.tools, "tools_source": later.tools_source}
    if first.served_model is None and later.served_model is not None:
        update["served_model"] = later.served_model
    if not first.served_models and later.served_models:
        update["served_models"] = later.served_models
    return first.model_copy(update=update) if update else first


Get = Callable[[str], Awaitable[Any]]
Post = Callable[[str, dict[str, Any]], Awaitable[Any]]


async def probe(base_url: str, model: str, get: Get, post: Post) -> ServerFacts:
    """Ask each server's places in turn (``get``/``post`` return parsed JSON or None)."""
    root = server_root(base_url)
    facts = parse_models(await get(f"{base_url.rstrip('/')}/models"), model)
    if facts.server in ("vllm", "llama-cpp-python"):
        return facts
    if facts.server in ("llama.cpp", "unknown"):  # /props first: the slot's own n_ctx
        facts = merge(parse_props(await get(f"{root}/props")), facts)
    if facts.server in ("lmstudio", "unknown"):
        lm = await get(f"{root}/api/v0/models/{quote(model, safe='')}")
        facts = merge(facts, parse_lmstudio(lm))
    if facts.server in ("ollama", "unknown"):
        show = await post(f"{root}/api/show", {"model": model})
        if isinstance(show, dict) and show:
            facts = merge(facts, parse_ollama(show, await get(f"{root}/api/ps"), model))
    return facts


class _Unreachable(Exception):
    pass


async def discover(
    base_url: str,
    model: str,
    *,
    headers: dict[str, str] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    timeout_s: float = PROBE_TIMEOUT_S,
) -> ServerFacts:
    """Probe the server at ``base_url`` for ``model``'s facts; never raises."""
    timeout = httpx.Timeout(timeout_s)
    async with httpx.AsyncClient(
        timeout=timeout, transport=transport, headers=headers or {}, verify=ssl_context()
    ) as client:

        async def answer(request: Awaitable[httpx.Response]) -> Any:
            try:
                response = await request
            except httpx.ConnectError as error:
                raise _Unreachable(str(error)) from None
            except httpx.HTTPError:
                return None
            if response.status_code != 200:
                return None
            try:
                return response.json()
            except ValueError:
                return None

        async def get(url: str) -> Any:
            return await answer(client.get(url))

        async def post(url: str, body: dict[str, Any]) -> Any:
            return await answer(client.post(url, json=body))

        try:
            return await probe(base_url, model, get, post)
        except _Unreachable as error:
            log.info("model facts: %s unreachable (%s)", base_url, error)
            return ServerFacts(reachable=False)


class FactsCache:
    """Facts per (base URL, model), kept ``ttl_s``; an unreachable server is asked
    again next time (it may be starting). One probe at a time per key."""

    def __init__(self, ttl_s: float = CACHE_TTL_S, clock: Callable[[], float] = time.monotonic):
        self.ttl_s = ttl_s
        self.clock = clock
        self._facts: dict[tuple[str, str], tuple[float, ServerFacts]] = {}
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}

    @staticmethod
    def key(base_url: str, model: str) -> tuple[str, str]:
        return base_url.rstrip("/"), model

    def peek(self, base_url: str, model: str) -> ServerFacts | None:
        found = self._facts.get(self.key(base_url, model))
        return found[1] if found is not None else None

    def fresh(self, base_url: str, model: str) -> ServerFacts | None:
        """The facts :meth:`get` would return at once, without asking the server or
        waiting for a probe under way; None when it would not."""
        key = self.key(base_url, model)
        found = self._facts.get(key)
        lock = self._locks.get(key)
        if found is None or self.clock() - found[0] >= self.ttl_s:
            return None
        return None if lock is not None and lock.locked() else found[1]

    def put(self, base_url: str, model: str, facts: ServerFacts) -> None:
        self._facts[self.key(base_url, model)] = (self.clock(), facts)

    def entries(self) -> list[tuple[tuple[str, str], ServerFacts]]:
        """Every (base URL, model) and its facts, in the order they were first learnt."""
        return [(key, facts) for key, (_, facts) in self._facts.items()]

    async def get(
        self, base_url: str, model: str, fetch: Callable[[], Awaitable[ServerFacts]]
    ) -> ServerFacts:
        key = self.key(base_url, model)
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            found = self._facts.get(key)
            if found is not None and self.clock() - found[0] < self.ttl_s:
                return found[1]
            facts = await fetch()
            if facts.reachable:
                self._facts[key] = (self.clock(), facts)
            elif found is not None:
                return found[1]  # keep what we knew while the server is away
            return facts
