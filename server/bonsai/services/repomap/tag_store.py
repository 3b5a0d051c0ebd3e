"""The workspace's tags by path, decoded from their cache rows on first use.

A warm start loads ~2,400 rows; decoding all of their tags costs more than the
whole first map may take, and the map shows only a few hundred files. So rows
are kept as loaded, and a file's tags are decoded when something reads them
(rendering, patching, a full rebuild). A warm start loads rows without their
encoded tags at all (``data`` None); they are read from the cache on first use.
Files whose row is not ``"tags"`` (binary) are not in the mapping.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

from bonsai.services.repomap.cache import CachedFile
from bonsai.services.repomap.records import FileTags, decode_tags


class TagStore(Mapping[str, FileTags]):
    """``Mapping[path, FileTags]`` over cache rows; not thread-safe (callers hold
    the service lock)."""

    def __init__(self, load_data: Callable[[Iterable[str] | None], dict[str, str]]) -> None:
        self.rows: dict[str, CachedFile] = {}
        self._decoded: dict[str, FileTags] = {}
        self._load_data = load_data  # encoded tags of rows loaded without them

    def with_data(self, paths: Iterable[str]) -> dict[str, CachedFile]:
        """The rows of ``paths`` (those known), each with its data loaded."""
        rows = {p: self.rows[p] for p in paths if p in self.rows}
        missing = [p for p, row in rows.items() if row.data is None]
        if missing:
            for path, data in self._load_data(missing).items():
                rows[path] = rows[path]._replace(data=data)
        return rows

    def decode_all(self) -> None:
        """Decode every file's tags now, loading the missing data in one query."""
        todo = [
            p for p, row in self.rows.items() if row.status == "tags" and p not in self._decoded
        ]
        if not todo:
            return
        data = self._load_data(None) if len(todo) > 64 else {}
        for path in todo:
            row = self.rows[path]
            text = row.data if row.data is not None else data.get(path)
            if text is not None:
                self._decoded[path] = decode_tags(path, text)

    def put(self, path: str, row: CachedFile, tags: FileTags | None = None) -> None:
        """Set a file's row; ``tags`` when already decoded (a fresh parse)."""
        self.rows[path] = row
        if tags is None:
            self._decoded.pop(path, None)
        else:
            self._decoded[path] = tags

    def drop(self, path: str) -> None:
        self.rows.pop(path, None)
        self._decoded.pop(path, None)

    def clear(self) -> None:
        self.rows = {}
        self._decoded = {}

    def __getitem__(self, path: str) -> FileTags:
        tags = self._decoded.get(path)
        if tags is not None:
            return tags
        row = self.rows[path]
        if row.status != "tags":
            raise KeyError(path)
        data = row.data if row.data is not None else self._load_data([path]).get(path)
        if data is None:
            raise KeyError(path)  # the row vanished from the cache under us
        tags = self._decoded[path] = decode_tags(path, data)
        return tags

    def __contains__(self, path: object) -> bool:
        row = self.rows.get(path) if isinstance(path, str) else None
        return row is not None and row.status == "tags"

    def __iter__(self) -> Iterator[str]:
        return (p for p, row in self.rows.items() if row.status == "tags")

    def __len__(self) -> int:
        return sum(1 for row in self.rows.values() if row.status == "tags")
