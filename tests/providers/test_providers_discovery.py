"""Model facts from local servers: each server's own shape, over real loopback HTTP,
and the precedence that turns them into the window a session plans for."""

from __future__ import annotations

import pytest
from shape_servers import (
    LLAMA_CPP,
    LLAMA_CPP_PYTHON,
    LMSTUDIO,
    VLLM,
    ollama,
    shape_server,
)

from bonsai.services.providers.discovery import FactsCache, ServerFacts, discover
from bonsai.services.providers.window import fit_reserve, resolve_window
from bonsai.settings import ModelInfo, ProviderSettings


async def test_vllm_window_is_max_model_len_and_nothing_else_is_asked() -> None:
    with shape_server(VLLM) as (base, seen):
        facts = await discover(base, "Qwen/Qwen2.5-Coder-7B-Instruct")
    assert facts.server == "vllm" and facts.window == 16_384
    assert "max_model_len" in facts.window_source and facts.tools is None
    assert [path for _, path, _ in seen] == ["/v1/models"]


async def test_llama_cpp_props_give_the_slot_context_and_tool_caps() -> None:
    with shape_server(LLAMA_CPP) as (base, _):
        facts = await discover(base, "smollm2")
    assert facts.server == "llama.cpp" and facts.window == 6_144
    assert "/props" in facts.window_source and facts.tools is False
    assert "supports_tool_calls" in facts.tools_source


async def test_llama_cpp_python_exposes_nothing_and_is_recognised() -> None:
    with shape_server(LLAMA_CPP_PYTHON) as (base, seen):
        facts = await discover(base, "smollm2")
    assert facts.server == "llama-cpp-python" and facts.window is None and facts.tools is None
    assert facts.reachable and len(seen) == 1


async def test_lmstudio_prefers_the_loaded_context_and_reads_tool_use() -> None:
    with shape_server(LMSTUDIO) as (base, _):
        facts = await discover(base, "qwen2.5-7b-instruct")
    assert facts.server == "lmstudio" and facts.window == 12_288 and facts.tools is True
    assert "loaded_context_length" in facts.window_source


async def test_lmstudio_unloaded_model_gives_its_maximum_with_a_caveat() -> None:
    routes = dict(LMSTUDIO)
    entry = dict(routes[("GET", "/api/v0/models/qwen2.5-7b-instruct")])
    del entry["loaded_context_length"]
    entry["state"] = "not-loaded"
    routes[("GET", "/api/v0/models/qwen2.5-7b-instruct")] = entry
    with shape_server(routes) as (base, _):
        facts = await discover(base, "qwen2.5-7b-instruct")
    assert facts.window == 32_768 and "not loaded" in facts.note


async def test_ollama_num_ctx_parameter_wins_and_is_sent_the_model_name() -> None:
    with shape_server(ollama('num_ctx 16384\nstop "<|im_end|>"')) as (base, seen):
        facts = await discover(base, "qwen2.5-coder:7b")
    assert facts.server == "ollama" and facts.window == 16_384 and facts.tools is True
    assert "num_ctx" in facts.window_source
    assert ("POST", "/api/show", {"model": "qwen2.5-coder:7b"}) in seen


async def test_ollama_loaded_context_then_its_default_never_the_trained_length() -> None:
    with shape_server(ollama('stop "<|im_end|>"', ps_ctx=8192)) as (base, _):
        loaded = await discover(base, "qwen2.5-coder:7b")
    assert loaded.window == 8_192 and "/api/ps" in loaded.window_source
    with shape_server(ollama('stop "<|im_end|>"')) as (base, _):
        default = await discover(base, "qwen2.5-coder:7b")
    assert default.window == 4_096 and "default" in default.window_source
    assert "num_ctx" in default.note and "OLLAMA_CONTEXT_LENGTH" in default.note


async def test_a_server_that_is_down_is_unreachable_not_an_error() -> None:
    with shape_server({}) as (base, _):
        pass  # closed: nothing listens there any more
    facts = await discover(base, "anything", timeout_s=1.0)
    assert not facts.reachable and facts.window is None


async def test_a_server_answering_garbage_gives_no_facts() -> None:
    routes = {("GET", "/v1/models"): {"data": "nope"}, ("GET", "/props"): [1, 2]}
    with shape_server(routes) as (base, _):
        facts = await discover(base, "m")
    assert facts == ServerFacts()


async def test_cache_asks_once_per_server_and_model_and_retries_an_unreachable_one() -> None:
    calls: list[str] = []
    answers = [ServerFacts(reachable=False), ServerFacts(server="vllm", window=4096)]

    async def fetch() -> ServerFacts:
        calls.append("x")
        return answers[min(len(calls) - 1, 1)]

    cache = FactsCache()
    first = await cache.get("http://h/v1/", "m", fetch)
    assert not first.reachable and cache.peek("http://h/v1", "m") is None
    second = await cache.get("http://h/v1", "m", fetch)
    third = await cache.get("http://h/v1", "m", fetch)
    assert second.window == third.window == 4096 and len(calls) == 2
    assert cache.peek("http://h/v1", "other") is None


def _local(**models: ModelInfo) -> ProviderSettings:
    return ProviderSettings(provider="openai-compatible", model="smollm2", models=models)


async def test_a_server_of_several_models_none_chosen_says_which_to_set() -> None:
    routes = ollama("num_ctx 16384")
    routes[("GET", "/v1/models")] = {
        "object": "list",
        "data": [
            {"id": "qwen2.5-coder:7b", "object": "model", "owned_by": "library"},
            {"id": "llama3.2:3b", "object": "model", "owned_by": "library"},
        ],
    }
    with shape_server(routes) as (base, _seen):
        facts = await discover(base, "gpt-4o-mini")  # nobody chose a model
    assert facts.served_model is None
    assert facts.served_models == ("qwen2.5-coder:7b", "llama3.2:3b")
    unchosen = resolve_window(ProviderSettings(provider="openai-compatible"), facts)
    assert any(
        "serves 2 models (qwen2.5-coder:7b, llama3.2:3b)" in n and "set BONSAI_MODEL" in n
        for n in unchosen.notes
    )
    chosen = resolve_window(_local(), facts, model="llama3.2:3b")
    assert not any("BONSAI_MODEL" in n for n in chosen.notes)


def test_unknown_local_model_gets_a_small_window_and_a_visible_note() -> None:
    window = resolve_window(_local(), ServerFacts(server="llama-cpp-python"))
    assert window.info.context_window == 8_192 and window.info.context_window < 128_000
    assert window.window_source == "default for an unknown model"
    assert any(
        "unknown window: set providers.models.smollm2.context_window" in n for n in window.notes
    )
    hosted = resolve_window(ProviderSettings(provider="openai", model="gpt-9-mystery"), None)
    assert hosted.info.context_window <= 32_768 and hosted.notes


def test_the_server_beats_the_builtin_row_and_the_users_row_beats_both() -> None:
    facts = ServerFacts(server="ollama", window=4096, window_source="Ollama POST /api/show x")
    settings = ProviderSettings(provider="openai-compatible", model="qwen2.5-coder:7b")
    served = resolve_window(settings, facts)
    assert served.info.context_window == 4096 and served.info.max_output <= 4096
    assert served.window_source == "Ollama POST /api/show x"
    assert served.info.family == "qwen"  # the rest of the registry row stays
    mine = ModelInfo(context_window=20_000)
    settings = ProviderSettings(
        provider="openai-compatible", model="qwen2.5-coder:7b", models={"qwen2.5-coder": mine}
    )
    written = resolve_window(settings, facts)
    assert written.info.context_window == 20_000 and "your config" in written.window_source


def test_a_users_row_without_a_window_does_not_hide_the_servers() -> None:
    priced = ModelInfo.model_validate({"price_input": 1.0})
    facts = ServerFacts(server="vllm", window=16_384, window_source="vLLM")
    window = resolve_window(_local(smollm2=priced), facts)
    assert window.info.context_window == 16_384 and window.info.price_input == 1.0


@pytest.mark.parametrize(
    ("window", "reserve", "fraction", "expected"),
    [
        (128_000, 16_000, 0.25, 16_000),  # big window: the configured reserve
        (8_192, 16_000, 0.25, 2_048),  # small window: a quarter of it
        (2_048, 16_000, 0.25, 512),
        (8_192, 16_000, 0.5, 4_096),  # the share is a setting
        (8_192, 1_000, 0.25, 1_000),  # a smaller configured reserve stays
    ],
)
def test_reserve_always_fits_the_window(
    window: int, reserve: int, fraction: float, expected: int
) -> None:
    assert fit_reserve(window, reserve, fraction) == expected
