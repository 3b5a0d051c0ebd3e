"""Issues that describe behaviour instead of naming code still put the right file
among the first five of the map: their words are in the code's docstrings,
comments, string literals (an error message the user quotes), or in the files
of a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from repomap_helpers import ServiceFactory, write_repo

from bonsai.services.repomap import ranking

# Written so that nothing in the issues below names a definition or a file of
# it: only the text inside the code says what each module is about.
ARCHIVE = '''\
"""Bundle members into one container on disk."""

from pkg.core import core_helper


class Bundle:
    def put(self, member, force=False):
        # a member that is already stored stays unless the caller insists
        if member in self.members and not force:
            raise ValueError("refusing to overwrite an existing archive member")
        self.members.append(core_helper(member))
'''

SCHEDULER = '''\
from pkg.core import core_helper


def next_slot(calendar, when):
    """Pick the earliest free appointment after a daylight saving transition,
    so that a meeting booked across the clock change does not shift by an hour."""
    return core_helper(calendar)[when]
'''

ENGINE = """\
from pkg.core import CoreConfig


def run(plan):
    return CoreConfig().load_settings(plan)
"""


@pytest.fixture
def behaviour_repo(tmp_path: Path) -> Path:
    root = write_repo(tmp_path / "repo")
    (root / "pkg" / "storage").mkdir()
    (root / "pkg" / "storage" / "__init__.py").write_text("")
    (root / "pkg" / "storage" / "unit_k.py").write_text(ARCHIVE)
    (root / "pkg" / "unit_m.py").write_text(SCHEDULER)
    (root / "pkg" / "unit_e.py").write_text(ENGINE)
    return root


def _first_five(make_service: ServiceFactory, root: Path, issue: str) -> list[str]:
    service = make_service(root)
    result = service.get(tokens=1024, mentions=issue)
    return [f.path for f in result.files[:5]]


QUOTED_ERROR = (
    "Adding the same thing twice with force=True still fails with\n"
    '"refusing to overwrite an existing archive member". I expected it to be replaced.'
)
DOCSTRING_ONLY = (
    "Meetings booked across the daylight saving clock change end up one hour late; "
    "the earliest free appointment should be picked."
)
COMMENT_ONLY = "A member that is already stored is kept even when the caller insists."
TRACEBACK = """Running a plan crashes:

Traceback (most recent call last):
  File "/home/me/venv/lib/python3.11/site-packages/pkg/unit_e.py", line 5, in run
    return Thing().go(plan)
KeyError: 'plan'
"""


@pytest.mark.parametrize(
    ("issue", "gold"),
    [
        (QUOTED_ERROR, "pkg/storage/unit_k.py"),
        (DOCSTRING_ONLY, "pkg/unit_m.py"),
        (COMMENT_ONLY, "pkg/storage/unit_k.py"),
        (TRACEBACK, "pkg/unit_e.py"),
    ],
    ids=["quoted-error-message", "docstring-words", "comment-words", "traceback-file"],
)
def test_behaviour_issue_puts_the_file_in_the_first_five(
    behaviour_repo: Path, make_service: ServiceFactory, issue: str, gold: str
) -> None:
    assert gold in _first_five(make_service, behaviour_repo, issue)


def test_without_the_text_words_the_docstring_issue_misses(
    behaviour_repo: Path, make_service: ServiceFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The words inside the code are what finds it (the test above can fail)."""
    monkeypatch.setattr(ranking, "LEXICAL_WEIGHT", 0.0)
    assert "pkg/unit_m.py" not in _first_five(make_service, behaviour_repo, DOCSTRING_ONLY)
    assert "pkg/storage/unit_k.py" not in _first_five(make_service, behaviour_repo, QUOTED_ERROR)


def test_the_code_a_matching_test_exercises_comes_first(
    behaviour_repo: Path, make_service: ServiceFactory
) -> None:
    tests = behaviour_repo / "tests"
    tests.mkdir()
    (tests / "test_overview.py").write_text(
        "from pkg.unit_e import run\n\n\n"
        "def test_quarterly_ledger_reconciliation_totals():\n"
        '    """The quarterly ledger reconciliation totals match the statement."""\n'
        "    assert run('quarterly ledger reconciliation')\n"
    )
    issue = "The quarterly ledger reconciliation totals do not match the statement."
    assert "pkg/unit_e.py" in _first_five(make_service, behaviour_repo, issue)


def test_word_scores_of_a_patched_graph_equal_a_fresh_build(
    behaviour_repo: Path, make_service: ServiceFactory, tmp_path: Path
) -> None:
    """An edit that drops one file's words and brings new ones scores files as a
    fresh build of the edited tree does, and the new words are found."""
    live = make_service(behaviour_repo)
    live.get(tokens=1024, mentions=DOCSTRING_ONLY)
    target = behaviour_repo / "pkg" / "unit_m.py"
    target.write_text(
        "def next_slot(calendar, when):\n"
        '    """Round the invoice total to the nearest cent before the ledger closes."""\n'
        "    return calendar[when]\n"
    )
    live.update_paths([target])
    live.forget_previous()
    issue = "The invoice total is not rounded to the nearest cent when the ledger closes."
    patched = live.get(tokens=1024, mentions=issue)
    fresh = make_service(behaviour_repo, db=tmp_path / "fresh.db").get(tokens=1024, mentions=issue)
    assert live.graph_origin == "patched"
    assert patched.text == fresh.text
    assert [f.path for f in patched.files] == [f.path for f in fresh.files]
    assert "pkg/unit_m.py" in [f.path for f in patched.files[:5]]
    stale = live.get(tokens=1024, mentions=DOCSTRING_ONLY)
    assert stale.files[0].path != "pkg/unit_m.py"  # its old words are gone
