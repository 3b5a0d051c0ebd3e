"""Tag extraction per language on small fixture files."""

from __future__ import annotations

from pathlib import Path

import pytest
import tree_sitter as ts

from bonsai.services.repomap.languages import language_for_path, load_language
from bonsai.services.repomap.tags import MAX_IDENT_CHARS, extract_tags

LANGS = Path(__file__).parent / "fixtures" / "langs"

# file -> (definitions that must be found as (name, kind), references that must be found)
CASES = {
    "sample.py": (
        {
            ("Polygon", "class"),
            ("area", "method"),
            ("compute_area", "function"),
            ("MAX_SIDES", "constant"),
        },
        {"Shape", "compute_area", "shoelace"},
    ),
    "sample.js": (
        {
            ("Polygon", "class"),
            ("area", "method"),
            ("computeArea", "function"),
            ("perimeter", "function"),
        },
        {"Shape", "computeArea", "shoelace"},
    ),
    "sample.ts": (
        {
            ("Measured", "interface"),
            ("Point", "type"),
            ("Polygon", "class"),
            ("area", "method"),
            ("computeArea", "function"),
        },
        {"Shape", "Measured", "Point", "computeArea", "shoelace"},
    ),
    "sample.tsx": (
        {("Toolbar", "function"), ("ToolbarProps", "interface")},
        {"Button", "formatLabel", "ToolbarProps"},
    ),
    "sample.go": (
        {
            ("Polygon", "type"),
            ("Measured", "type"),
            ("Area", "method"),
            ("ComputeArea", "function"),
        },
        {"ComputeArea", "Point", "shoelace"},
    ),
    "sample.rs": (
        {
            ("Polygon", "struct"),
            ("Measured", "trait"),
            ("area", "method"),
            ("compute_area", "function"),
        },
        {"Point", "Shape", "compute_area", "shoelace"},
    ),
    "Sample.java": (
        {("Polygon", "class"), ("Measured", "interface"), ("area", "method")},
        {"Shape", "Measured", "Point", "computeArea"},
    ),
    "sample.c": (
        {("polygon", "struct"), ("compute_area", "function"), ("MAX_SIDES", "macro")},
        {"shoelace", "point"},
    ),
    "sample.cpp": (
        {
            ("shapes", "module"),
            ("Polygon", "class"),
            ("area", "method"),
            ("compute_area", "function"),
        },
        {"Shape", "Point", "compute_area", "shoelace"},
    ),
    "Sample.cs": (
        {
            ("Polygon", "class"),
            ("IMeasured", "interface"),
            ("Area", "method"),
            ("Sides", "property"),
        },
        {"Shape", "IMeasured", "ComputeArea"},
    ),
    "sample.rb": (
        {("Shapes", "module"), ("Polygon", "class"), ("area", "method"), ("from_points", "method")},
        {"Shape", "compute_area", "normalize", "Geometry"},
    ),
    "sample.php": (
        {("Polygon", "class"), ("area", "method"), ("computeArea", "function")},
        {"Shape", "Measured", "computeArea", "shoelace"},
    ),
}


def _tags(name: str):
    path = LANGS / name
    language = language_for_path(name)
    assert language is not None, f"no language for {name}"
    return extract_tags(name, path.read_bytes(), language)


@pytest.mark.parametrize("name", sorted(CASES))
def test_definitions_and_references_found(name: str) -> None:
    want_defs, want_refs = CASES[name]
    tags = _tags(name)
    assert want_defs <= {(d.name, d.kind) for d in tags.definitions}
    assert want_refs <= set(tags.references)


@pytest.mark.parametrize("name", sorted(CASES))
def test_output_is_sorted_and_unique(name: str) -> None:
    tags = _tags(name)
    lines = [(d.line, d.name) for d in tags.definitions]
    assert lines == sorted(lines)
    assert len(set(tags.definitions)) == len(tags.definitions)
    assert list(tags.references) == sorted(tags.references)
    assert tags == _tags(name)  # identical on a second run


def test_signature_is_the_trimmed_header() -> None:
    by_name = {d.name: d for d in _tags("sample.py").definitions}
    assert by_name["area"].signature == "def area(self, scale: float = 1.0) -> float:"
    assert by_name["area"].depth == 1
    assert by_name["area"].line == 7
    go = {(d.name, d.line): d for d in _tags("sample.go").definitions}
    assert go[("Area", 11)].signature == "func (p *Polygon) Area(scale float64) float64"


def test_multiline_signature_is_joined() -> None:
    source = b"def long_one(\n    alpha: int,\n    beta: str,\n) -> None:\n    pass\n"
    (d,) = extract_tags("m.py", source, "python").definitions
    assert d.signature == "def long_one(alpha: int, beta: str) -> None:"


def test_definition_name_is_not_a_reference_to_itself() -> None:
    tags = _tags("sample.ts")
    assert "Polygon" not in tags.references  # only its declaration mentions it


def test_unknown_extension_has_no_language() -> None:
    assert language_for_path("README.md") is None
    assert language_for_path("Makefile") is None
    assert language_for_path("src/App.TSX") == "tsx"


def test_a_definition_name_a_pattern_also_captures_is_taken_off_once_per_capture() -> None:
    # C: a struct's name is a (type_identifier), which the reference patterns
    # capture everywhere: its definition is not counted, each use is
    source = (
        b"struct Point { int x; };\n"
        b"typedef struct Point Point_t;\n"
        b"struct Point origin(struct Point p) { return p; }\n"
        b"int main(void) { struct Point a; origin(a); origin(a); return 0; }\n"
    )
    tags = extract_tags("geo.c", source, "c")
    assert ("Point", "struct") in {(d.name, d.kind) for d in tags.definitions}
    assert tags.references["Point"] == 4  # four uses; the definition's name is not one
    assert tags.references["origin"] == 2


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"], ids=["unix", "windows", "old-mac"])
def test_definition_lines_are_the_parsers_rows_whatever_the_line_endings(newline: bytes) -> None:
    # lines are counted from the source in one pass, not read from each node:
    # they must still be the rows tree-sitter gives the definitions
    lines = [
        "# café, naïve: multi-byte text before the definitions",
        "class Outer:",
        "    '''Docstring\twith a tab.'''",
        "",
        "    def first(self):",
        "        def inner():",
        "            pass",
        "",
        "    def second(self): pass",
        "LIMIT = 3",
        "def last(): pass",
    ]
    source = newline.join(line.encode() for line in lines) + newline
    tags = extract_tags("m.py", source, "python")
    tree = ts.Parser(load_language("python")).parse(source)
    rows: dict[str, int] = {}
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        name = node.child_by_field_name("name")
        if node.type in ("class_definition", "function_definition") and name is not None:
            rows[source[name.start_byte : name.end_byte].decode()] = node.start_point[0] + 1
        stack.extend(node.children)
    got = {d.name: d.line for d in tags.definitions if d.kind != "constant"}
    assert got == rows
    if newline != b"\r":  # a lone CR is no line break to tree-sitter
        assert got == {"Outer": 2, "first": 5, "inner": 6, "second": 9, "last": 11}


def test_constants_are_the_upper_case_names_assigned_at_module_level_only() -> None:
    # the module-level pattern runs on a cursor of its own that starts no match
    # below the root (queries.py, ``top_level``): what it finds must be exactly
    # the module's own statements, wherever they are in the file
    source = b"\n".join(
        [
            b"LIMIT = 3",
            b"lower = 1",
            b"A = B = 2",
            b"TYPED: int = 4",
            b"class Box:",
            b"    INSIDE = 1",
            b"    def method(self):",
            b"        def deeper():",
            b"            DEEP = 2",
            b"if True:",
            b"    GUARDED = int",
            b"def f():",
            b"    LOCAL = 1",
            b"LATE = 5",
            b"",
        ]
    )
    tags = extract_tags("m.py", source, "python")
    constants = {(d.name, d.line) for d in tags.definitions if d.kind == "constant"}
    assert constants == {("LIMIT", 1), ("A", 3), ("TYPED", 4), ("LATE", 14)}
    go = b"package m\n\nconst Pi = 3.14\n\nfunc f() int {\n\tconst local = 1\n\treturn local\n}\n"
    go_tags = extract_tags("m.go", go, "go")
    assert {(d.name, d.kind) for d in go_tags.definitions} == {
        ("Pi", "constant"),
        ("f", "function"),
    }


def test_reference_counts_keep_names_up_to_the_length_limit() -> None:
    kept, dropped = "a" * MAX_IDENT_CHARS, "b" * (MAX_IDENT_CHARS + 1)
    source = f"{kept}()\n{kept}()\n{dropped}()\nobj.café()\nclass K(Base): pass\n".encode()
    refs = extract_tags("m.py", source, "python").references
    assert refs == {"Base": 1, kept: 2, "café": 1}
    assert list(refs) == sorted(refs)
