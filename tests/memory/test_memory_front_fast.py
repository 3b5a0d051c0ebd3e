"""The front-matter fast path reads what the YAML parser reads, or steps aside.

Most entries hold a few ``key: value`` lines; :mod:`bonsai.services.memory.simple_front`
reads those without the YAML parser. Wherever it answers, the answer must be
the parser's; wherever it is unsure, the parser runs and its errors (with line
and column) are unchanged.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from frontmatter.default_handlers import YAMLHandler
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bonsai.services.memory.entry import EntryFormatError, load_front, split_entry
from bonsai.services.memory.frontmatter_edit import render_new
from bonsai.services.memory.simple_front import KEYS as KEYS_KNOWN
from bonsai.services.memory.simple_front import parse_simple_front

_YAML = YAMLHandler()

KEYS = st.sampled_from(
    ["name", "description", "type", "created", "updated", "enabled", "tags", "Name", "yes"]
)
SEPARATORS = st.sampled_from([": ", ":", ":  ", " : ", ":\t"])
# characters YAML treats specially somewhere, and ordinary ones
TRICKY = "abcAZ09 -_:#'\"\\,.[]{}&*!|>%@`?~=\t\r\u00e9\u2028\u0085\ufeff\u00a0\U0001f600"
WORDS = st.sampled_from(
    [
        "yes", "No", "TRUE", "false", "off", "On", "null", "Null", "~", "y", "n", "1.5",
        "0x1F", "1_000", ".inf", "12:30", "2026-07-01", "2026-13-01", "2026-1-5",
        "2026-07-01 10:00", "true", "plain words", "a: b", "a #b", "a#b", "ends:",
        "'quoted'", "'it''s'", "'bad' tail", '"dq"', '"with \\" escape"', '"a" "b"', "''", '""',
        "- item", "[a, b]", "{a: 1}", "&anchor", "*alias", "!tag x", "|", ">", "%x", "@x",
    ]
)  # fmt: skip
VALUES = st.one_of(WORDS, st.text(alphabet=TRICKY, max_size=12))


def _line(key: str, separator: str, value: str) -> str:
    return f"{key}{separator}{value}"


FRONTS = st.lists(
    st.one_of(
        st.builds(_line, KEYS, SEPARATORS, VALUES),
        st.sampled_from(["", "# a comment", "  indented: x", "...", "---", "- x"]),
    ),
    max_size=6,
).flatmap(
    lambda lines: st.sampled_from(["\n", "\r\n"]).map(
        lambda newline: "".join(line + newline for line in lines)
    )
)


# front matter close to what entries hold: the keys bonsai knows, ": ", and
# values that are mostly plain, quoted, dates or booleans, with a few
# characters that matter to YAML mixed in
_INNER = st.text(alphabet="abcXYZ 019-_.,:#'\"()/\u00e9\u2028", max_size=16)
NEAR_VALUES = st.one_of(
    st.builds(lambda head, rest: head + rest, st.sampled_from("aZy"), _INNER),
    _INNER.map(lambda inner: f"'{inner}'"),
    _INNER.map(lambda inner: f'"{inner}"'),
    st.dates(min_value=date(1900, 1, 1)).map(date.isoformat),
    st.sampled_from(["true", "false", "yes", "2026-02-30", "2026-07-01x", ""]),
)
NEAR_FRONTS = st.lists(
    st.builds(_line, st.sampled_from(sorted(KEYS_KNOWN)), st.just(": "), NEAR_VALUES),
    max_size=6,
).map(lambda lines: "".join(line + "\n" for line in lines))


def _full(front: str) -> object:
    try:
        return ("ok", _YAML.load(front))
    except Exception as exc:  # the parser's outcome, whatever it is
        return ("error", type(exc).__name__)


@settings(max_examples=600, deadline=None)
@given(FRONTS)
@example("description: Use thiserror enums\ntype: preference\ncreated: 2026-07-01\n")
@example("name: x\nname: y\n")
@example("enabled: false\r\ndescription: 'it''s: fine'\r\n")
@example('description: "a # b"\n')
@example("created: 2026-02-30\n")
def test_fast_path_equals_the_yaml_parser(front: str) -> None:
    fast = parse_simple_front(front)
    if fast is None:
        return  # unsure: the parser runs
    assert _full(front) == ("ok", fast or None)


@settings(max_examples=600, deadline=None)
@given(NEAR_FRONTS)
def test_fast_path_equals_the_yaml_parser_on_near_simple_front_matter(front: str) -> None:
    fast = parse_simple_front(front)
    if fast is None:
        return
    assert _full(front) == ("ok", fast or None)


def test_the_front_matter_bonsai_writes_takes_the_fast_path() -> None:
    """What ``memory_write`` writes (and the common hand-written forms) never
    needs the YAML parser, so a store's build skips it."""
    written = render_new(
        {
            "name": "prefers-thiserror",
            "description": "Use thiserror enums: never anyhow in libraries",
            "type": "preference",
            "created": date(2026, 7, 1),
            "updated": date(2026, 7, 2),
            "enabled": False,
        },
        "Module-level errors are thiserror enums.",
    )
    fronts = [
        written.front,
        'description: "The ledger sync keeps its data in NATS"\ncreated: 2026-05-02\n',
        "description: it's the blue script, always\r\nupdated: 2026-01-31\r\n",
    ]
    for front in fronts:
        fast = parse_simple_front(front)
        assert fast is not None, front
        assert fast == _YAML.load(front)
    assert parse_simple_front(written.front) == {
        "name": "prefers-thiserror",
        "description": "Use thiserror enums: never anyhow in libraries",
        "type": "preference",
        "created": date(2026, 7, 1),
        "updated": date(2026, 7, 2),
        "enabled": False,
    }


def test_an_error_still_names_its_line_and_column() -> None:
    """A line the fast path declines (``a: b`` is no plain value) goes to the
    parser, whose message points at the file's line and column."""
    with pytest.raises(EntryFormatError, match="at line 3, column 15: mapping values"):
        split_entry("---\nname: ok\ndescription: a: b\n---\nbody\n")


def test_a_date_that_does_not_exist_is_an_issue_not_a_crash(make_service, home: Path) -> None:
    """``created: 2026-13-01`` is a date to YAML but not a real one: the entry
    is reported with its line and skipped; the other entries still load."""
    store = home / "memory"
    store.mkdir()
    (store / "bad-date.md").write_text(
        "---\ndescription: x\ncreated: 2026-13-01\n---\nbody\n", encoding="utf-8"
    )
    (store / "good.md").write_text("---\ndescription: ok\n---\nbody\n", encoding="utf-8")
    service = make_service(model=False)
    assert [entry.name for entry in service.list()] == ["good"]
    (issue,) = service.issues()
    assert issue.path.name == "bad-date.md"
    assert "line 3" in issue.problem and "month must be in 1..12" in issue.problem
    assert load_front("updated: 2026-07-01\n") == {"updated": date(2026, 7, 1)}
