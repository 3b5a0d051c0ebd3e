"""No import cycle anywhere in ``bonsai``: module-level or inside functions.

import-linter's layers contract sees imports between packages only; this
finds every strongly connected set of modules (Tarjan) in the graph grimp
builds from every run-time ``import`` statement, wherever it stands (module
level or inside a function). Imports under ``if TYPE_CHECKING:`` run at no
time and are left out.
``python -m bonsai.dev.import_cycles`` prints each cycle and exits 1 if any.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence

Graph = Mapping[str, Sequence[str]]


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


def main() -> int:
    found = cycles(import_graph())
    for component in found:
        print("import cycle: " + " ↔ ".join(component), file=sys.stderr)
    if not found:
        print("no import cycles")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
