"""Read reuse: pointers for unchanged repeated reads, real bytes on a re-request."""

from __future__ import annotations

from ctx_helpers import items_of, make_input, step, user

from bonsai.core.context import (
    ContextState,
    Item,
    apply_action,
    assemble,
    pointer_target,
    read_reuse,
)
from bonsai.domain import Evidence, Message, content_hash
from bonsai.settings import ContextSettings

TEXT = "line\n" * 400


def _read(lines: tuple[int, int] | None = None, text: str = TEXT) -> Evidence:
    lo, hi = lines if lines else (None, None)
    return Evidence(
        kind="read", path="src/a.py", start_line=lo, end_line=hi, content_hash=content_hash(text)
    )


def _session() -> list[Item]:
    return items_of(
        [user("look"), *step(0, TEXT, path="src/a.py"), *step(1, "other", path="src/b.py")]
    )


def test_a_repeated_unchanged_read_becomes_a_pointer() -> None:
    pointer = read_reuse(_session(), _read(), explicit=False)
    assert pointer is not None and pointer_target(pointer) == "m3"
    assert "`src/a.py` is unchanged" in pointer


def test_changed_bytes_another_range_or_an_explicit_request_get_the_bytes() -> None:
    items = _session()
    assert read_reuse(items, _read(text=TEXT + "more"), explicit=False) is None
    assert read_reuse(items, _read(lines=(1, 10)), explicit=False) is None
    assert read_reuse(items, _read(), explicit=True) is None
    assert read_reuse(items, Evidence(kind="edit", path="src/a.py"), explicit=False) is None


def test_asking_again_right_after_a_pointer_returns_the_bytes() -> None:
    items = _session()
    pointer = read_reuse(items, _read(), explicit=False)
    assert pointer is not None
    again = [*step(2, pointer, path="src/a.py")]
    again[1] = again[1].model_copy(update={"evidence": _read()})
    items = items_of([i.message for i in items] + again)
    assert read_reuse(items, _read(), explicit=False) is None


def test_a_read_no_longer_in_the_context_is_not_a_pointer_target() -> None:
    items = _session()
    state, _ = apply_action(ContextState(), items, "m3", "stub", 1)
    assert read_reuse(items, _read(), explicit=False, state=state) is None


def test_pointer_targets_are_protected_from_gc() -> None:
    items = _session()
    pointer = read_reuse(items, _read(), explicit=False)
    assert pointer is not None
    messages = [i.message for i in items]
    messages += [
        Message(role="assistant", content="again", tool_calls=step(9, "")[0].tool_calls),
        Message(role="tool", content=pointer, tool_call_id="call9", evidence=_read()),
    ]
    for n in range(10, 14):
        messages += step(n, "z" * 900, path=f"src/z{n}.py")
    result = assemble(
        make_input(
            items_of(messages),
            window=14_000,
            reserve=5_000,
            settings=ContextSettings(gc_trigger=0.3, min_rewrite_payback=0),
        )
    )
    assert result.state.stubs and "m3" not in result.state.stubs
    assert next(r for r in result.ledger if r.id == "m3").reason.startswith("read-reuse pointer")


def _numbered(lo: int, hi: int, *, changed: int | None = None, style: str = "cat") -> str:
    """What a read tool prints for lines lo..hi of a file whose line n is `value = n`."""
    rows = []
    for n in range(lo, hi + 1):
        text = "value = 'edited'" if n == changed else f"value = {n}"
        rows.append(f"{n:6}\t{text}" if style == "cat" else f"{n}:{text}")
    return "\n".join(rows) + f"\n[lines {lo}-{hi} of 400]"


def _ranged(lo: int, hi: int, text: str) -> Evidence:
    return Evidence(
        kind="read", path="src/a.py", start_line=lo, end_line=hi, content_hash=content_hash(text)
    )


def _wide_session(style: str = "cat", hi: int = 160) -> list[Item]:
    wide = _numbered(100, hi, style=style)
    return items_of([user("look"), *step(0, wide, path="src/a.py", lines=(100, hi))])


def test_a_narrower_read_of_unchanged_lines_points_to_the_wider_read() -> None:
    for style in ("cat", "window"):
        narrow = _numbered(110, 150, style=style)
        pointer = read_reuse(
            _wide_session(style), _ranged(110, 150, narrow), explicit=False, text=narrow
        )
        assert pointer is not None and pointer_target(pointer) == "m3"
        assert "`src/a.py` lines 110-150 is unchanged" in pointer
        assert "the same lines are in that read" in pointer


def test_a_narrower_read_gets_the_bytes_when_a_line_changed_or_the_text_is_unknown() -> None:
    items = _wide_session()
    changed = _numbered(110, 150, changed=120)
    assert read_reuse(items, _ranged(110, 150, changed), explicit=False, text=changed) is None
    narrow = _numbered(110, 150)
    assert read_reuse(items, _ranged(110, 150, narrow), explicit=False) is None
    assert read_reuse(items, _ranged(110, 150, narrow), explicit=True, text=narrow) is None
    outside = _numbered(150, 170)
    assert read_reuse(items, _ranged(150, 170, outside), explicit=False, text=outside) is None


def test_a_small_read_inside_a_big_one_gets_the_bytes() -> None:
    """A pointer protects its target from collection: a few lines are not worth it."""
    items = _wide_session(hi=399)
    small = _numbered(120, 160)
    assert read_reuse(items, _ranged(120, 160, small), explicit=False, text=small) is None
    half = _numbered(120, 300)
    assert read_reuse(items, _ranged(120, 300, half), explicit=False, text=half) is not None


def test_asking_for_the_narrower_range_again_after_its_pointer_returns_the_bytes() -> None:
    narrow = _numbered(110, 150)
    evidence = _ranged(110, 150, narrow)
    pointer = read_reuse(_wide_session(), evidence, explicit=False, text=narrow)
    assert pointer is not None
    again = step(1, pointer, path="src/a.py", lines=(110, 150))
    again[1] = again[1].model_copy(update={"evidence": evidence})
    items = items_of([i.message for i in _wide_session()] + again)
    assert read_reuse(items, evidence, explicit=False, text=narrow) is None


def test_a_pointer_longer_than_the_bytes_is_not_used() -> None:
    short = "x = 1"
    items = items_of([user("look"), *step(0, short, path="src/t.py")])
    evidence = Evidence(kind="read", path="src/t.py", content_hash=content_hash(short))
    assert read_reuse(items, evidence, explicit=False) is not None  # text unknown
    assert read_reuse(items, evidence, explicit=False, text=short) is None
