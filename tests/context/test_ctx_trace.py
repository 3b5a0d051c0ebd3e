"""A folded view of a file's lines leaves a trace in the summary: where, and the names."""

from __future__ import annotations

import re

from ctx_helpers import items_of, step, user
from hypothesis import given, settings
from hypothesis import strategies as st

from bonsai.core.context import parse_sections, update_summary
from bonsai.core.context.groups import call_names
from bonsai.core.context.trace import _written, view_traces
from bonsai.domain import Message, ToolCall

VIEW = "\n".join(
    [
        "    40\tdef compute_zeta_total(rows):",
        "    41\t    total = helper_cache.lookup(rows)",
        "    42\t    return total + ZETA_OFFSET",
        "    43\t",
        "    44\tclass ZetaLoader:",
        "    45\t    pass",
    ]
)


def _view_step(n: int, output: str, command: str) -> list[Message]:
    call = ToolCall(id=f"v{n}", name="bash", arguments=f'{{"command": "{command}"}}')
    return [
        Message(role="assistant", content=f"Look {n}.", tool_calls=(call,)),
        Message(role="tool", content=output, tool_call_id=call.id, name="bash"),
    ]


SPAN = items_of(
    [
        user("Fix the zeta total."),
        *_view_step(0, VIEW, "nl -ba src/pkg/zeta.py | sed -n '40,45p'"),
        *step(1, "just some output\nwith no file lines\nat all here", name="bash"),
    ]
)


def test_a_numbered_view_leaves_its_file_range_and_names() -> None:
    (entry,) = view_traces(SPAN, call_names(SPAN), SPAN)
    assert entry.startswith("seen in `src/pkg/zeta.py`:40-45: ")
    # what the lines define comes first, then the other distinctive names
    assert entry.index("`compute_zeta_total`") < entry.index("`helper_cache.lookup`")
    assert "`ZetaLoader`" in entry and "`ZETA_OFFSET`" in entry
    assert "`total`" not in entry and "`rows`" not in entry  # plain words are no trace


def test_output_that_is_no_view_leaves_no_trace() -> None:
    plain = items_of([*step(0, "a\nb\nc\nd", name="bash")])
    assert view_traces(plain, call_names(plain), plain) == []


def test_a_read_with_evidence_is_a_view_of_its_range() -> None:
    read = items_of(
        [*step(0, "def parse_header(x):\n    return x\n\n# end", path="a/b.py", lines=(7, 10))]
    )
    (entry,) = view_traces(read, call_names(read), read)
    assert entry == "seen in `a/b.py`:7-10: `parse_header`"


def test_the_summary_keeps_the_traces_in_their_share_of_its_room() -> None:
    traces = view_traces(SPAN, call_names(SPAN), SPAN)
    text = update_summary(
        None, SPAN, call_names(SPAN), goal="Fix it", max_chars=1_200, traces=traces, trace_chars=300
    )
    assert parse_sections(text)["Seen in"] == traces and len(text) <= 1_200
    # a later fold merges its traces in; the oldest go when the room is full
    more = [f"seen in `f{n}.py`:1-9: `name_{n}_long_enough`" for n in range(12)]
    later = update_summary(
        text, [], {}, goal="Fix it", max_chars=1_200, traces=more, trace_chars=300
    )
    seen = parse_sections(later)["Seen in"]
    assert seen[-1] == more[-1] and traces[0] not in seen
    assert sum(len(e) + 3 for e in seen) <= 300 and len(later) <= 1_200
    # without room, no traces
    bare = update_summary(
        None, SPAN, call_names(SPAN), goal="Fix it", max_chars=1_200, traces=traces
    )
    assert parse_sections(bare)["Seen in"] == []


def test_a_name_the_agent_wrote_after_the_view_comes_first_in_its_trace() -> None:
    # `helper_cache.lookup` is neither defined by the view nor its rarest name, but
    # the agent wrote it after reading the view: it is the first name of the trace
    items = items_of(
        [
            user("Fix the zeta total."),
            *_view_step(0, VIEW, "nl -ba src/pkg/zeta.py | sed -n '40,45p'"),
            Message(role="assistant", content="helper_cache.lookup returns None for []."),
        ]
    )
    (entry,) = view_traces(items[:3], call_names(items), items)
    assert entry.startswith("seen in `src/pkg/zeta.py`:40-45: `helper_cache.lookup`, ")
    # nothing the agent writes after the fold (not in the session yet) counts
    (before,) = view_traces(items[:3], call_names(items), items[:3])
    assert before.index("`compute_zeta_total`") < before.index("`helper_cache.lookup`")


def test_a_name_the_request_still_holds_is_left_out_of_the_trace() -> None:
    held = "The plan: keep ZETA_OFFSET and rename compute_zeta_total."
    (entry,) = view_traces(SPAN, call_names(SPAN), SPAN, held)
    assert "`compute_zeta_total`" not in entry and "`ZETA_OFFSET`" not in entry
    assert "`helper_cache.lookup`" in entry and "`ZetaLoader`" in entry
    # a name inside a longer one is not held
    (other,) = view_traces(SPAN, call_names(SPAN), SPAN, "my_compute_zeta_total_v2")
    assert "`compute_zeta_total`" in other


def test_the_traces_keep_their_room_when_the_other_headings_overflow_theirs() -> None:
    # one long finding, decision and risk each: trimming cannot bring the other
    # headings into their half, so they are cut short; the traces stay whole
    long_span = items_of(
        [
            user("Fix the zeta total."),
            Message(role="assistant", content="I will run it. " + "Plan word. " * 40),
            *step(0, "Traceback (most recent call last):\n" + "E " * 200, name="bash", ok=False),
        ]
    )
    traces = view_traces(SPAN, call_names(SPAN), SPAN)
    text = update_summary(
        None,
        long_span,
        call_names(long_span),
        goal="Fix it",
        max_chars=500,
        traces=traces,
        trace_chars=250,
    )
    assert parse_sections(text)["Seen in"] == traces
    assert len(text) <= 500 and "…" in text
    assert text.startswith("## Current goal") and text.endswith(traces[-1])


def test_a_dunder_method_is_no_name_for_a_trace() -> None:
    view = "\n".join(
        [
            "    10\tclass ZetaLoader:",
            "    11\t    def __init__(self, rows):",
            "    12\t        self.rows_cache = rows",
            "    13\t    def load_rows(self):",
        ]
    )
    items = items_of([*_view_step(0, view, "nl -ba src/zeta.py | sed -n '10,13p'")])
    (entry,) = view_traces(items, call_names(items), items)
    assert "`__init__`" not in entry
    assert "`ZetaLoader`" in entry and "`load_rows`" in entry and "`self.rows_cache`" in entry


def _written_by_regex(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", text) is not None


@settings(max_examples=400, deadline=None)
@given(
    name=st.text(alphabet="ab_.é1", min_size=1, max_size=4),
    text=st.text(alphabet="ab_.é1 ²(-\n", max_size=60),
)
def test_a_name_is_written_exactly_where_the_whole_word_pattern_finds_it(
    name: str, text: str
) -> None:
    """The hand-checked search (a few occurrences, then the pattern) agrees with the
    whole-word pattern it replaced, on names written many times inside longer names too."""
    assert _written(name, text) == _written_by_regex(name, text)
    crowded = (name + "x") * 20 + text
    assert _written(name, crowded) == _written_by_regex(name, crowded)
