"""A bounded, thread-safe LRU cache keyed by content hash, with hit/miss stats."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

from pydantic import BaseModel, ConfigDict

V = TypeVar("V")


class CacheStats(BaseModel):
    """Counters of one cache, for the ledger and for tests."""

    model_config = ConfigDict(frozen=True)

    hits: int
    misses: int
    evictions: int
    size: int
    max_size: int


class LRUCache(Generic[V]):
    """Least-recently-used map of at most ``max_size`` entries."""

    def __init__(self, max_size: int) -> None:
        if max_size < 1:
            raise ValueError(f"cache max_size must be >= 1, got {max_size}")
        self._max = max_size
        self._data: OrderedDict[str, V] = OrderedDict()
        self._lock = threading.Lock()
        self._hits = self._misses = self._evictions = 0

    def get(self, key: str) -> V | None:
        """The cached value (now most recent), or ``None``; counts a hit or a miss."""
        with self._lock:
            value = self._data.get(key)
            if value is None:
                self._misses += 1
                return None
            self._data.move_to_end(key)
            self._hits += 1
            return value

    def put(self, key: str, value: V) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self._max:
                self._data.popitem(last=False)
                self._evictions += 1

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(
                hits=self._hits,
                misses=self._misses,
                evictions=self._evictions,
                size=len(self._data),
                max_size=self._max,
            )
