"""An exact estimator whose tokenizer is loaded when it is first needed, not before.

Loading tiktoken's o200k_base builds its BPE tables from a 3.6 MB rank file: about
0.5 s of CPU, and ~45 MB. A daemon that never counts (one that answers ``initialize``
and its status, a client that only lists sessions) should not pay it. A
:class:`DeferredEstimator` knows its name and its confidence (``exact``) at once, so
a counter, its cache keys and its ledger's labels are the same as the loaded one's;
the tokenizer itself is loaded by :meth:`start` in a thread (the daemon starts it
when a session first builds its model's counter, so the load runs off the event
loop while the client's next request travels), or at the first count when nothing
started it. Every count waits for the load and is then the loaded estimator's own:
never an estimate shown as exact. The load's failure is raised by every count that
needed it, with what failed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from bonsai.services.tokens.types import Confidence, Estimator, TokenizerUnavailable


class DeferredEstimator:
    """The exact estimator ``name``, made by ``load()`` on first need (once)."""

    def __init__(self, name: str, load: Callable[[], Estimator]) -> None:
        self._name = name
        self._load: Callable[[], Estimator] | None = load
        self._lock = threading.Lock()  # held by whoever loads: the counts wait on it
        self._starting = threading.Lock()
        self._loaded: Estimator | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None

    @property
    def name(self) -> str:
        return self._name

    @property
    def confidence(self) -> Confidence:
        return "exact"

    @property
    def is_loaded(self) -> bool:
        return self._loaded is not None

    def start(self) -> None:
        """Begin the load in a thread (once; nothing when loaded or already begun)."""
        with self._starting:  # not the load's lock: a load in progress holds that one
            if self._loaded is not None or self._thread is not None or self._load is None:
                return
            self._thread = threading.Thread(
                target=self._load_quietly, name=f"bonsai-tokenizer:{self._name}", daemon=True
            )
            self._thread.start()

    def loaded(self) -> Estimator:
        """The loaded estimator, waiting for (or doing) the load."""
        found = self._loaded
        if found is not None:
            return found
        with self._lock:  # the thread holds it while it loads: a count waits here
            if self._loaded is None and self._error is None and self._load is not None:
                try:
                    self._loaded = self._load()
                except Exception as error:  # kept: every later count says the same
                    self._error = error
                self._load = None
            if self._loaded is None:
                raise TokenizerUnavailable(
                    f"the tokenizer {self._name} failed to load: {self._error}"
                ) from self._error
            return self._loaded

    def count_text(self, text: str) -> int:
        return self.loaded().count_text(text)

    def __getattr__(self, attribute: str) -> Any:
        """The loaded estimator's own attributes (``encoding``, ``tokenizer``)."""
        if attribute.startswith("_"):
            raise AttributeError(attribute)
        return getattr(self.loaded(), attribute)

    def _load_quietly(self) -> None:
        try:
            self.loaded()
        except TokenizerUnavailable:
            pass  # kept in _error: the first count that needs it raises it


def start_loading(estimator: Estimator) -> None:
    """Begin loading ``estimator``'s tokenizer in a thread when it is deferred."""
    if isinstance(estimator, DeferredEstimator):
        estimator.start()
