"""The environment variables bonsai reads, by name only (no imports: the CLI's
``status`` and ``chat`` read them without loading the providers or pydantic).

``KEY_ENV``: the variable each provider reads its API key from.
``ENV_KEYS``: each ``BONSAI_*`` variable and the config key it overrides.
"""

from __future__ import annotations

KEY_ENV: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "openai-compatible": "OPENAI_COMPATIBLE_API_KEY",
}

ENV_KEYS: dict[str, str] = {
    "BONSAI_PROVIDER": "providers.provider",
    "BONSAI_MODEL": "providers.model",
    "BONSAI_BASE_URL": "providers.base_url",
    "BONSAI_FAST_MODEL": "providers.fast_model",
    "BONSAI_PRESET": "context.preset",
    "BONSAI_SMOL": "context.smol",
    "BONSAI_EPISODES": "episodes.enabled",
    "BONSAI_MEMORY_EMBEDDINGS": "memory.embeddings",
}
