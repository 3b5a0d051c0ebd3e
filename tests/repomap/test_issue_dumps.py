"""An issue's environment dump (``show_versions()``, ``pip list``) names the
packages installed, not the code at fault: it is left out before the issue is
read, so a module named after a supported package does not lead the map."""

from __future__ import annotations

from pathlib import Path

import pytest
from repomap_helpers import ServiceFactory, write_repo

from bonsai.services.repomap import issue_text
from bonsai.services.repomap.issue_text import without_dumps

VERSIONS = """\
INSTALLED VERSIONS
------------------
commit: None
python-bits: 64
OS: Linux
zarr: 2.5.0
netCDF4: None
h5py: 3.7.0
pandas: 1.1.4
"""
PIP_LIST = "Package    Version\n" + "".join(
    f"{name:<12}{version}\n" for name, version in [("zarr", "2.5.0"), ("attrs", "19.1.0")] * 3
)
ISSUE = (
    "Merging keeps a reference to the first dataset's attributes\n\n"
    "After a merge, changing an attribute of the merged result changes the source.\n\n" + VERSIONS
)
MERGE = '''\
def merge_attrs(variable_attrs):
    """Combine the attributes of the merged datasets; the result is a copy."""
    return variable_attrs[0]
'''
ZARR = '''\
def open_zarr(store):
    """Read a zarr store written by zarr 2.5 or netCDF4 / h5py files."""
    return store
'''


def test_a_dump_is_dropped_and_everything_else_kept() -> None:
    text = "Title\n\nThe merge is wrong:\nkey: value\n" + VERSIONS + "\nThanks!\n" + PIP_LIST
    kept = without_dumps(text)
    assert "zarr" not in kept and "Package" not in kept
    assert kept.startswith("Title\n\nThe merge is wrong:\nkey: value\nINSTALLED VERSIONS\n")
    assert "Thanks!" in kept
    prose = "a: 1\nb: two\nc: three\nd: four\ne: five\nf: six\n"  # pairs, but not versions
    assert without_dumps(prose) == prose
    assert without_dumps("x" * 100_000) == "x" * 100_000


@pytest.fixture
def backend_repo(tmp_path: Path) -> Path:
    root = write_repo(tmp_path / "repo")
    (root / "pkg" / "merge.py").write_text(MERGE)
    (root / "pkg" / "backends").mkdir()
    (root / "pkg" / "backends" / "zarr.py").write_text(ZARR)
    return root


def _order(make_service: ServiceFactory, root: Path) -> list[str]:
    return [f.path for f in make_service(root).get(tokens=1024, mentions=ISSUE).files]


def test_the_environment_dump_does_not_name_a_backend(
    backend_repo: Path, make_service: ServiceFactory
) -> None:
    order = _order(make_service, backend_repo)
    assert order[0] == "pkg/merge.py"
    assert "pkg/backends/zarr.py" not in order[:5]


def test_read_as_written_the_dump_lifts_the_backend(
    backend_repo: Path, make_service: ServiceFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The test above can fail: with the dump read, ``zarr`` names the backend."""
    monkeypatch.setattr(issue_text, "DROP_DUMPS", False)
    assert "pkg/backends/zarr.py" in _order(make_service, backend_repo)[:5]
