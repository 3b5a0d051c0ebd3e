"""The graph snapshot saved next to the tag cache: a warm start with nothing
changed loads it and renders the same bytes; any change to the files it was
built from, and any corrupt or foreign row, makes the service rebuild."""

from __future__ import annotations

import os
from pathlib import Path

import apsw
import pytest
from repomap_helpers import ServiceFactory, write_repo

from bonsai.services.repomap.graph_store import SnapshotError, decode, encode

MENTION = "function_007_two gives the wrong answer for Widget012"


def _first_map(make_service: ServiceFactory, repo: Path, db: Path, **kwargs: object):
    service = make_service(repo, db)
    result = service.get(tokens=600, **kwargs)
    origin = service.graph_origin
    service.stop()
    return result, origin


def _blob(db: Path) -> tuple[str, str, bytes]:
    conn = apsw.Connection(str(db))
    try:
        row = conn.execute("SELECT workspace, key, data FROM graphs").fetchone()
    finally:
        conn.close()
    assert row is not None
    return str(row[0]), str(row[1]), bytes(row[2])


def _store(db: Path, workspace: str, key: str, data: bytes) -> None:
    conn = apsw.Connection(str(db))
    try:
        conn.execute("INSERT OR REPLACE INTO graphs VALUES (?, ?, ?)", (workspace, key, data))
    finally:
        conn.close()


def test_warm_start_loads_the_graph_and_renders_the_same_bytes(
    repo: Path, tmp_path: Path, make_service: ServiceFactory
):
    db = tmp_path / "cache.db"
    cold, origin = _first_map(make_service, repo, db)
    assert origin == "built"
    for mentions in ("", MENTION, ""):  # the saved ranking is reused, then not, then is
        warm, origin = _first_map(make_service, repo, db, mentions=mentions)
        fresh, _ = _first_map(make_service, repo, tmp_path / "fresh.db", mentions=mentions)
        (tmp_path / "fresh.db").unlink()
        assert origin == "loaded"
        assert warm.text == fresh.text and warm.text
        assert warm.files == fresh.files
        if not mentions:
            assert warm.text == cold.text


def test_touch_keeps_the_snapshot_but_an_edit_rebuilds_it(
    repo: Path, tmp_path: Path, make_service: ServiceFactory
):
    db = tmp_path / "cache.db"
    _first_map(make_service, repo, db)
    leaf = repo / "tools" / "leaf_utility.py"
    st = leaf.stat()
    os.utime(leaf, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    assert _first_map(make_service, repo, db)[1] == "loaded"  # same content hash
    leaf.write_text(leaf.read_text() + "\n\ndef function_007_two():\n    return 0\n")
    edited, origin = _first_map(make_service, repo, db, mentions=MENTION)
    assert origin == "built"
    assert "tools/leaf_utility.py:" in edited.text  # now a definer of a named function
    fresh, _ = _first_map(make_service, repo, tmp_path / "fresh.db", mentions=MENTION)
    assert edited.text == fresh.text
    again, again_origin = _first_map(make_service, repo, db, mentions=MENTION)
    assert (again.text, again_origin) == (edited.text, "loaded")


def test_edits_in_a_running_service_are_saved_on_stop(
    repo: Path, tmp_path: Path, make_service: ServiceFactory
):
    db = tmp_path / "cache.db"
    service = make_service(repo, db)
    service.get(tokens=600)
    target = repo / "pkg" / "mod_030.py"
    target.write_text(target.read_text() + "\n\ndef late_addition_here():\n    pass\n")
    service.update_paths([target])
    service.get(tokens=600, mentions="late_addition_here")
    assert service.graph_origin == "patched"
    service.stop()
    warm, origin = _first_map(make_service, repo, db, mentions="late_addition_here")
    fresh, _ = _first_map(make_service, repo, tmp_path / "fresh.db", mentions="late_addition_here")
    assert origin == "loaded"
    assert "late_addition_here" in warm.text
    assert warm.text == fresh.text


def _corrupt_body(blob: bytes) -> bytes:
    cut = blob.index(b"\n") + 40
    return blob[:cut] + bytes([blob[cut] ^ 0xFF]) + blob[cut + 1 :]


def _inconsistent(blob: bytes) -> bytes:
    """A well-formed snapshot (right checksum) whose arrays do not fit together."""
    core, last = decode(blob)
    core = core._replace(ref_names=core.ref_names[:-1], ref_factor=core.ref_factor[:-1])
    return encode((core, last))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "damage",
    [
        lambda blob: b"not a snapshot at all",
        lambda blob: blob[: len(blob) // 2],
        _corrupt_body,
        _inconsistent,
    ],
    ids=["garbage", "truncated", "flipped-byte", "inconsistent"],
)
def test_corrupt_snapshot_is_rebuilt_not_trusted(
    repo: Path, tmp_path: Path, make_service: ServiceFactory, damage
):
    db = tmp_path / "cache.db"
    good, _ = _first_map(make_service, repo, db, mentions=MENTION)
    workspace, key, blob = _blob(db)
    _store(db, workspace, key, damage(blob))
    again, origin = _first_map(make_service, repo, db, mentions=MENTION)
    assert origin == "built"
    assert again.text == good.text
    assert _first_map(make_service, repo, db, mentions=MENTION)[1] == "loaded"  # repaired


def test_foreign_snapshot_is_not_trusted(tmp_path: Path, make_service: ServiceFactory):
    """A snapshot of another workspace, even filed under this one's current key."""
    db = tmp_path / "cache.db"
    small = write_repo(tmp_path / "small", modules=12)
    large = write_repo(tmp_path / "large", modules=30)
    expected, _ = _first_map(make_service, small, tmp_path / "alone.db")
    _first_map(make_service, small, db)
    _first_map(make_service, large, db)
    conn = apsw.Connection(str(db))
    rows = {str(w): (str(k), bytes(d)) for w, k, d in conn.execute("SELECT * FROM graphs")}
    conn.close()
    small_key = rows[str(small.resolve())][0]
    _store(db, str(small.resolve()), small_key, rows[str(large.resolve())][1])
    result, origin = _first_map(make_service, small, db)
    assert origin == "built"
    assert result.text == expected.text


def test_decode_rejects_what_encode_did_not_write():
    with pytest.raises(SnapshotError):
        decode(b'{"format":"something-else/9"}\n')
    with pytest.raises(SnapshotError):
        decode(b"")
