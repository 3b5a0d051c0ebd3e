"""Tiny loopback HTTP servers answering the model-info endpoints of local LLM
servers with the shapes those servers return (vLLM, Ollama, LM Studio,
llama.cpp, llama-cpp-python). Only the discovery paths are served; anything
else is a 404, as on a server that does not know the path."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Routes = dict[tuple[str, str], Any]  # (method, path) -> JSON body


@contextmanager
def shape_server(routes: Routes) -> Iterator[tuple[str, list[tuple[str, str, Any]]]]:
    """Serve ``routes``; yields (base URL ending in /v1, requests seen)."""
    seen: list[tuple[str, str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _answer(self, method: str) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            seen.append((method, self.path, body))
            found = routes.get((method, self.path))
            if found is None:
                self.send_response(404)
                self.send_header("content-type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"error":"not found"}')
                return
            payload = json.dumps(found).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            self._answer("GET")

        def do_POST(self) -> None:
            self._answer("POST")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        server.shutdown()
        server.server_close()


VLLM: Routes = {
    ("GET", "/v1/models"): {
        "object": "list",
        "data": [
            {
                "id": "Qwen/Qwen2.5-Coder-7B-Instruct",
                "object": "model",
                "created": 1733000000,
                "owned_by": "vllm",
                "root": "Qwen/Qwen2.5-Coder-7B-Instruct",
                "parent": None,
                "max_model_len": 16384,
                "permission": [{"id": "modelperm-1", "object": "model_permission"}],
            }
        ],
    }
}


def ollama(parameters: str, ps_ctx: int | None = None) -> Routes:
    routes: Routes = {
        ("GET", "/v1/models"): {
            "object": "list",
            "data": [
                {"id": "qwen2.5-coder:7b", "object": "model", "created": 1, "owned_by": "library"}
            ],
        },
        ("POST", "/api/show"): {
            "license": "Apache License",
            "modelfile": "FROM qwen2.5-coder:7b",
            "parameters": parameters,
            "template": "{{ .Prompt }}",
            "details": {"format": "gguf", "family": "qwen2", "parameter_size": "7.6B"},
            "model_info": {
                "general.architecture": "qwen2",
                "general.parameter_count": 7615616512,
                "qwen2.context_length": 32768,
                "qwen2.embedding_length": 3584,
            },
            "capabilities": ["completion", "tools", "insert"],
        },
        ("GET", "/api/ps"): {"models": []},
    }
    if ps_ctx is not None:
        routes[("GET", "/api/ps")] = {
            "models": [
                {
                    "name": "qwen2.5-coder:7b",
                    "model": "qwen2.5-coder:7b",
                    "size": 6591830464,
                    "details": {"format": "gguf", "family": "qwen2"},
                    "expires_at": "2026-12-01T10:00:00Z",
                    "size_vram": 0,
                    "context_length": ps_ctx,
                }
            ]
        }
    return routes


LMSTUDIO: Routes = {
    ("GET", "/v1/models"): {
        "object": "list",
        "data": [
            {"id": "qwen2.5-7b-instruct", "object": "model", "owned_by": "organization_owner"}
        ],
    },
    ("GET", "/api/v0/models/qwen2.5-7b-instruct"): {
        "id": "qwen2.5-7b-instruct",
        "object": "model",
        "type": "llm",
        "publisher": "lmstudio-community",
        "arch": "qwen2",
        "compatibility_type": "gguf",
        "quantization": "Q4_K_M",
        "state": "loaded",
        "max_context_length": 32768,
        "loaded_context_length": 12288,
        "capabilities": ["tool_use"],
    },
}

LLAMA_CPP: Routes = {
    ("GET", "/v1/models"): {
        "object": "list",
        "data": [
            {
                "id": "smollm2",
                "object": "model",
                "owned_by": "llamacpp",
                "meta": {"n_ctx": 6144, "n_ctx_train": 8192, "n_params": 134515008},
            }
        ],
    },
    ("GET", "/props"): {
        "default_generation_settings": {"n_ctx": 6144, "params": {"temperature": 0.8}},
        "total_slots": 1,
        "model_path": "/models/smollm2.gguf",
        "chat_template": "{% for m in messages %}...{% endfor %}",
        "chat_template_caps": {"supports_tools": False, "supports_tool_calls": False},
        "build_info": "b1-abc",
    },
}

LLAMA_CPP_PYTHON: Routes = {
    ("GET", "/v1/models"): {
        "object": "list",
        "data": [{"id": "smollm2", "object": "model", "owned_by": "me", "permissions": []}],
    }
}
