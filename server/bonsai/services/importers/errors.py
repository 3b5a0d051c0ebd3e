"""The one error every importer raises for input it cannot read."""

from __future__ import annotations


class ImportFormatError(ValueError):
    """Malformed or unrecognised input. Carries where the problem is: a 1-based
    ``line``/``column`` for text positions, or a ``json_path`` such as
    ``history[3].args.command`` for structural problems (or both, for JSONL)."""

    def __init__(
        self,
        source: str,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        json_path: str | None = None,
    ) -> None:
        self.source = source
        self.message = message
        self.line = line
        self.column = column
        self.json_path = json_path
        super().__init__(self._render())

    def _render(self) -> str:
        where = self.source
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        if self.json_path:
            where += f" at {self.json_path}"
        return f"{where}: {self.message}"
