"""bonsai: a context-managing daemon for LLM coding agents."""

__version__ = "0.1.0"
