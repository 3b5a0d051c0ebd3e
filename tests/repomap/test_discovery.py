"""Which files the map considers: .gitignore (nested), vendored dirs, size, binaries."""

from __future__ import annotations

from pathlib import Path

from bonsai.services.repomap.discovery import IgnoreRules, discover


def _tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


def _paths(root: Path, **kwargs) -> list[str]:
    return [c.path for c in discover(IgnoreRules(root, **kwargs)).files]


def test_gitignore_root_and_nested_with_negation(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            ".gitignore": "*.log\ngenerated/\n/top_only.py\n",
            "keep.py": "",
            "debug.log": "",
            "top_only.py": "",
            "sub/top_only.py": "",
            "generated/out.py": "",
            "sub/.gitignore": "secret.py\n!important.log\n",
            "sub/secret.py": "",
            "sub/important.log": "",
            "sub/deeper/secret.py": "",
            "other/secret.py": "",
        },
    )
    assert _paths(root) == [
        ".gitignore",
        "keep.py",
        "other/secret.py",
        "sub/.gitignore",
        "sub/important.log",  # re-included by the deeper .gitignore
        "sub/top_only.py",  # "/top_only.py" is anchored to the root
    ]


def test_vendored_and_git_directories_are_skipped(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "app.js": "",
            "node_modules/lib/index.js": "",
            ".git/config": "",
            ".venv/lib/site.py": "",
            "vendor/x.go": "",
            "src/third_party/y.c": "",
            "src/main.c": "",
        },
    )
    assert _paths(root) == ["app.js", "src/main.c"]
    # a custom list replaces the defaults, but .git is always skipped
    assert _paths(root, excluded_dirs={"src"}) == [
        ".venv/lib/site.py",
        "app.js",
        "node_modules/lib/index.js",
        "vendor/x.go",
    ]


def test_huge_files_are_reported_not_listed(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"small.py": "x = 1\n", "big.py": "#" * 2_000})
    found = discover(IgnoreRules(root, max_file_bytes=1_000))
    assert [c.path for c in found.files] == ["small.py"]
    assert found.too_large == ["big.py"]


def test_order_is_sorted_by_path_and_stable(tmp_path: Path) -> None:
    root = _tree(tmp_path, {name: "" for name in ["b/z.py", "a.py", "b/a.py", "a/b.py", "B.py"]})
    first = _paths(root)
    assert first == sorted(first)
    assert first == _paths(root)


def test_excluded_checks_single_paths(tmp_path: Path) -> None:
    root = _tree(tmp_path, {".gitignore": "logs/\n*.tmp\n", "sub/.gitignore": "x.py\n"})
    rules = IgnoreRules(root)
    assert rules.excluded("logs/a.py")
    assert rules.excluded("a.tmp")
    assert rules.excluded("sub/x.py")
    assert rules.excluded("node_modules/pkg/i.js")
    assert not rules.excluded("sub/y.py")
    assert not rules.excluded("x.py")
