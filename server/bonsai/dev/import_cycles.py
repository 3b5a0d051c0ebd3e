"""No import cycle anywhere in ``bonsai``: module-level or inside functions.

import-linter's layers contract sees imports between packages only; this
finds every strongly connected set of modules (Tarjan) in the graph grimp
builds from every run-time ``import`` statement, wherever it stands (module
level or inside a function). Imports under ``if TYPE_CHECKING:`` run at no
time and are left out.

An import of a bonsai module inside a function is how a cycle hides (it
still runs, only later), so those are refused too, except in the modules of
:data:`LAZY`, each with its reason (the CLI imports a command's code only
when it runs, for start-up speed).
``python -m bonsai.dev.import_cycles`` prints each cycle and each refused
import and exits 1 if any.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

Graph = Mapping[str, Sequence[str]]

# packages (or modules) whose functions may import bonsai modules, and why; the
# cycle check above still sees those imports
LAZY: dict[str, str] = {
    "bonsai.cli": "start-up speed: a command imports only the code it runs "
    "(and `bonsai repomap` counts chars/4 when tiktoken cannot load)",
}


def cycles(graph: Graph) -> list[list[str]]:
    """Each set of two or more modules that import one another, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(graph.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            child = next(edges, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.get(child, ()))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def import_graph(package: str = "bonsai") -> dict[str, list[str]]:
    import grimp

    graph = grimp.build_graph(package, exclude_type_checking_imports=True)
    return {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}


def function_imports(source: str, package: str = "bonsai") -> Iterator[tuple[int, str]]:
    """(line, module) of each import of ``package`` (or a relative one) inside a function."""
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.Import):
                for alias in inner.names:
                    if alias.name == package or alias.name.startswith(package + "."):
                        yield inner.lineno, alias.name
            elif isinstance(inner, ast.ImportFrom):
                module = inner.module or ""
                if inner.level or module == package or module.startswith(package + "."):
                    yield inner.lineno, "." * inner.level + module


def late_imports(package: str = "bonsai") -> list[str]:
    """``path:line: module`` for every import inside a function outside :data:`LAZY`."""
    root = Path(__import__(package).__file__ or "").parent
    found = set()
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if any(name == lazy or name.startswith(lazy + ".") for lazy in LAZY):
            continue
        for line, module in function_imports(path.read_text(encoding="utf-8"), package):
            found.add(f"{path.relative_to(root.parent)}:{line}: {module}")
    return sorted(found)


def main() -> int:
    found = cycles(import_graph())
    for component in found:
        print("import cycle: " + " ↔ ".join(component), file=sys.stderr)
    late = late_imports()
    for where in late:
        print(f"import inside a function (move it up or list it in LAZY): {where}", file=sys.stderr)
    if not found and not late:
        print("no import cycles, no imports inside functions")
    return 1 if found or late else 0


if __name__ == "__main__":
    raise SystemExit(main())
