"""File regions (pure part): which reads relate to a question, and how each mode renders."""

from __future__ import annotations

from bonsai.core.retrieval.file_regions import (
    CurrentText,
    ReadRegion,
    read_regions,
    related_regions,
    render_region,
)
from bonsai.core.retrieval.long_content import Limits
from bonsai.domain import Evidence, Message, StoredMessage


def words(text: str) -> int:  # a deterministic counter: one token per word
    return len(text.split())


def read(seq: int, path: str, start: int | None = None, end: int | None = None) -> StoredMessage:
    evidence = Evidence(kind="read", path=path, start_line=start, end_line=end, content_hash="h")
    message = Message(role="tool", content="…", name="read_file", tool_call_id=f"c{seq}")
    return StoredMessage(
        message_id=f"m{seq}",
        session_id="s",
        seq=seq,
        created_at=0.0,
        message=message.model_copy(update={"evidence": evidence}),
    )


def test_each_file_keeps_its_latest_read() -> None:
    regions = read_regions([read(1, "a.py"), read(2, "b.py", 5, 9), read(3, "a.py", 10, 20)])
    assert [(r.path, r.start, r.end, r.message_id) for r in regions] == [
        ("b.py", 5, 9, "m2"),
        ("a.py", 10, 20, "m3"),
    ]


def test_related_means_a_hit_the_path_or_the_current_text() -> None:
    regions = read_regions([read(1, "src/retry.py"), read(2, "notes.md"), read(3, "other.py")])
    texts = {"notes.md": "the backoff doubles", "other.py": "nothing"}
    chosen = related_regions(regions, "retry backoff", set(), texts)
    assert [r.path for r in chosen] == ["src/retry.py", "notes.md"]
    assert [r.path for r in related_regions(regions, "zebra", {"m3"}, texts)] == ["other.py"]


LINES = [f"value_{n} = {n}" for n in range(1, 101)]  # numbered: 4 words a line


def region_text(mode: str, lines: list[str], excerpt_above: int = 800) -> str:
    region = ReadRegion("cfg.py", None, None, "h", "m1", 1)
    current = CurrentText(lines, 1, len(lines), changed=True)
    return render_region(region, current, mode, words, Limits(excerpt_above, 3_000))  # type: ignore[arg-type]


def test_auto_is_whole_when_small_and_the_head_when_big() -> None:
    small = region_text("auto", LINES[:10])
    assert "value_10 = 10" in small and "[head only" not in small
    big = region_text("auto", LINES, excerpt_above=60)
    assert "value_1 = 1" in big and "value_100" not in big
    assert '[head only: 7 of 100 lines; read_file {"path": "cfg.py", "offset": 8}' in big


def test_digest_is_the_head_and_full_is_everything() -> None:
    assert "value_100" not in region_text("digest", LINES, excerpt_above=60)
    full = region_text("full", LINES, excerpt_above=60)
    assert "value_100 = 100" in full and "[head only" not in full


def test_a_region_is_labelled_as_todays_text() -> None:
    text = region_text("auto", LINES[:3])
    assert text.splitlines()[0] == (
        "[current text of cfg.py, lines 1-3 of 3, read from disk now (changed since this "
        "session read it); today's file, not the historic read]"
    )
    gone = render_region(
        ReadRegion("gone.py", None, None, None, "m1", 1), CurrentText(None), "auto", words, Limits()
    )
    assert "no longer exists" in gone
