"""The needed-later loss on small constructed sessions whose answer is known."""

from __future__ import annotations

from bonsai.core.replay.loss import items_of_line
from bonsai.domain import Message, ToolCall
from bonsai.services.replay import build_config, replay_steps, source_from_messages
from bonsai.services.replay.loss import measure_loss
from bonsai.services.replay.runner import ReplayConfig
from bonsai.settings import ContextSettings

LISTING = "\n".join(
    ["src/pkg/zeta_loader.py", "ZETA_LIMIT = 4242"]
    + [f"filler line {n} of the listing" for n in range(400)]
)


def _step(n: int, output: str, text: str | None = None) -> list[Message]:
    call = ToolCall(id=f"c{n}", name="bash", arguments=f'{{"command": "step {n}"}}')
    return [
        Message(role="assistant", content=text or f"Step {n}.", tool_calls=(call,)),
        Message(role="tool", content=output, tool_call_id=call.id, name="bash"),
    ]


def _session(later: str, *, echo: bool = False) -> list[Message]:
    """A listing early on, bulky steps that push it out of a small window, then a
    reply saying ``later``; with ``echo`` a recent output repeats the listing's items."""
    messages = [Message(role="user", content="Find the limit and raise it.")]
    messages += _step(0, LISTING)
    for n in range(1, 9):
        messages += _step(n, "\n".join(f"bulk {n}.{k} " + "x" * 60 for k in range(40)))
    if echo:
        messages += _step(9, "src/pkg/zeta_loader.py: ZETA_LIMIT = 4242")
    messages.append(Message(role="assistant", content=later))
    return messages


def _config() -> ReplayConfig:
    settings = ContextSettings(
        gc_trigger=0.3, compact_trigger=0.9, compact_target=0.2, min_rewrite_payback=0
    )
    return build_config(window=26_000, settings=settings)


def _loss(messages: list[Message]):  # type: ignore[no-untyped-def]
    config = _config()
    source = source_from_messages(messages)
    rows = replay_steps(source, config)
    assert "m3" in rows[-1].assembly.state.stubs, "the listing was stubbed"
    return measure_loss(source, rows, config)


USES = "Now I open src/pkg/zeta_loader.py and raise ZETA_LIMIT from 4242 to 5000."


def test_an_item_only_the_removed_output_held_is_needed_later_and_recall_finds_it() -> None:
    loss = _loss(_session(USES))
    assert loss.spans >= 1 and loss.needed_spans == 1
    assert loss.recoverable_spans == 1
    # weighed by the two lines holding the items, not the whole 400-line listing
    assert 0 < loss.needed_tokens < 40 < loss.removed_tokens
    assert loss.by_stage["stub"][1] == loss.needed_tokens
    # the breakdown names what removed it, what it was and how old it was
    assert loss.by_removal["stub, tool"][:2] == [loss.removed_tokens, loss.needed_tokens]
    (age,) = [k for k, (_, needed, _) in loss.by_age.items() if needed]
    assert age.startswith("tool, ")
    assert sum(r for r, _, _ in loss.by_removal.values()) == loss.removed_tokens


def test_nothing_is_needed_when_the_agent_never_uses_it() -> None:
    loss = _loss(_session("All bulk steps are done; nothing else to do."))
    assert loss.needed_spans == 0 and loss.needed_tokens == 0 and loss.removed_tokens > 0
    assert loss.recoverable_share() == 1.0


def test_an_item_still_in_the_window_elsewhere_is_not_a_loss() -> None:
    loss = _loss(_session(USES, echo=True))
    assert loss.needed_spans == 0


def test_distinctive_items_are_paths_identifiers_numbers_and_long_lines() -> None:
    items = items_of_line(
        "  see src/app/models.py: QuerySet.filter parse_header fooBar 4012 3.14 x"
    )
    assert {
        "src/app/models.py",
        "QuerySet.filter",
        "parse_header",
        "fooBar",
        "4012",
        "3.14",
    } <= items
    assert not {"see", "x", "2", "__init__"} & items_of_line("see x 2 __init__")
    assert items_of_line("https://github.com/org/repo/issues/12345") == {
        "https://github.com/org/repo/issues/12345"  # the whole line, never its path parts
    }


def test_a_name_inside_a_longer_one_is_not_a_use() -> None:
    later = "Now I write reproduce_zeta_loader.py and set ZETA_LIMIT_MAX to 42420."
    loss = _loss(_session(later))
    assert loss.needed_spans == 0, "zeta_loader.py, ZETA_LIMIT and 4242 are parts of other names"


def test_the_languages_own_names_are_not_items() -> None:
    for line in ("raise ValueError", "os.path.join(a)", "sys.exit(1)", "isinstance(x)"):
        assert not items_of_line(line), line
    assert items_of_line("parse_header(os_path)") == {"parse_header", "os_path"}
    assert items_of_line("see json.py") == {"json.py"}  # a file named like a module


def test_an_output_echoing_what_the_agent_wrote_before_it_is_not_a_loss() -> None:
    # the agent names the file and the constant itself, the listing echoes them
    messages = _session(USES)
    first = messages[1]
    messages[1] = first.model_copy(
        update={"content": "I will look for src/pkg/zeta_loader.py and ZETA_LIMIT = 4242."}
    )
    loss = _loss(messages)
    assert loss.needed_spans == 0 and loss.needed_tokens == 0


def test_the_measure_is_the_same_on_every_run() -> None:
    runs = {repr(_loss(_session(USES)).needed) for _ in range(2)}
    assert len(runs) == 1
    (span,) = _loss(_session(USES)).needed
    assert span.how == "stub" and span.recoverable and "ZETA_LIMIT" in span.items


NAMES = [f"zeta_name_{n:02d}" for n in range(20)]
VIEW = "\n".join(
    ["    40\tdef compute_zeta_total(rows):"]
    + [f"    {41 + k}\t    value = {name}(rows)" for k, name in enumerate(NAMES)]
)


def _folded_view(later: str, after: str | None = None) -> tuple[list[Message], ReplayConfig]:
    """An `nl -ba` view early on, bulky steps that fold it away (the first says
    ``after``), then ``later``."""
    call = ToolCall(
        id="v0", name="bash", arguments='{"command": "nl -ba src/pkg/zeta.py | sed -n 40,60p"}'
    )
    messages = [
        Message(role="user", content="Fix the zeta total."),
        Message(role="assistant", content="Look.", tool_calls=(call,)),
        Message(role="tool", content=VIEW, tool_call_id="v0", name="bash"),
    ]
    for n in range(1, 9):
        bulk = "\n".join(f"bulk {n}.{k} " + "x" * 60 for k in range(40))
        messages += _step(n, bulk, after if n == 1 else None)
    messages.append(Message(role="assistant", content=later))
    settings = ContextSettings(
        gc_trigger=0.3, compact_trigger=0.5, compact_target=0.2, min_stub_tokens=100_000
    )
    return messages, build_config(window=26_000, settings=settings)


def _fold_loss(later: str, after: str | None = None):  # type: ignore[no-untyped-def]
    messages, config = _folded_view(later, after)
    source = source_from_messages(messages)
    rows = replay_steps(source, config)
    state = rows[-1].assembly.state
    assert state.summary is not None and "m3" in state.folded(), "the view was folded"
    trace = "seen in `src/pkg/zeta.py`:40-60: " + (f"`{NAMES[-1]}`" if after else "`compute_zeta")
    assert trace in state.summary.text
    return measure_loss(source, rows, config)


def test_a_name_a_folded_view_left_in_the_summary_is_not_lost() -> None:
    loss = _fold_loss("I will now change compute_zeta_total to skip empty rows.")
    assert loss.by_stage["fold"][0] > 0 and loss.needed_spans == 0 and loss.needed_tokens == 0


def test_a_name_the_trace_left_out_is_still_needed_later() -> None:
    loss = _fold_loss(f"I will now change {NAMES[-1]} to skip empty rows.")
    assert loss.needed_spans == 1 and loss.by_stage["fold"][1] == loss.needed_tokens > 0


def test_a_name_the_agent_wrote_after_the_view_is_kept_by_its_trace_and_not_lost() -> None:
    # the agent pointed at it between the view and the fold (its message was folded
    # too): the trace names it first (asserted in _fold_loss), so writing it again
    # later loses nothing
    said = f"The bug is in {NAMES[-1]}: it ignores empty rows."
    loss = _fold_loss(f"I will now change {NAMES[-1]} to skip empty rows.", after=said)
    assert loss.by_stage["fold"][0] > 0 and loss.needed_spans == 0 and loss.needed_tokens == 0


def test_the_breakdown_tells_views_of_lines_from_whole_reads_and_the_agent() -> None:
    from bonsai.core.context import Item
    from bonsai.domain import Evidence
    from bonsai.services.replay.loss import age_bucket, output_class

    numbered = "\n".join(f"   {n}\tline {n}" for n in range(10, 20))
    view = Message(role="tool", content=numbered, tool_call_id="c1", name="bash")
    calls = {"c1": ("bash", '{"command": "nl -ba src/app.py | sed -n 10,19p"}')}
    whole = Message(
        role="tool",
        content="import os\nx = 1\ny = 2\n",
        tool_call_id="c2",
        evidence=Evidence(kind="read", path="src/app.py"),
    )
    said = Message(role="assistant", content="Now I edit it.")
    assert output_class(Item(id="a", seq=1, turn=1, message=view), calls) == "view of lines"
    assert output_class(Item(id="b", seq=2, turn=1, message=whole), calls) == "file read"
    assert output_class(Item(id="c", seq=3, turn=1, message=said), calls) == "agent"
    assert [age_bucket(n) for n in (0, 5, 16, 17)] == [
        "0-4 calls",
        "5-8 calls",
        "9-16 calls",
        "over 16 calls",
    ]
