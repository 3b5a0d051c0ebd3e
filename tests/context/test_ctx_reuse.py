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
