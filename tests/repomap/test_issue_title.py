"""An issue's first line (its title) says what is wrong in a few words; its body's
logs, code and environment dumps hold many more. The title's words are a lane of
their own, so of two files the body matches alike, the one the title describes
leads the map."""

from __future__ import annotations

from pathlib import Path

import pytest
from repomap_helpers import ServiceFactory, write_repo

from bonsai.services.repomap import fusion
from bonsai.services.repomap.fusion import title_of

REMINDERS = '''\
def shift_reminder(reminder, offset):
    """Move a recurring reminder across a timezone conversion."""
    return reminder + offset
'''
UPLOADS = '''\
def requeue_upload(upload, attempt):
    """Apply the retry policy of the upload queue after a failed attempt."""
    return upload, attempt + 1
'''
REMINDER_WORDS = "recurring reminder timezone conversion"
UPLOAD_WORDS = "upload queue retry policy"


def issue(title_words: str, other_words: str) -> str:
    """A title about one file; the body says the title's words twice more and the
    other file's three times, so both issues have the same words, counted alike
    (a word counts at most three times), and differ only in their title."""
    body = [f"Seen in the log: {other_words}." for _ in range(3)]
    body += [f"Also {title_words}." for _ in range(2)]
    return f"Wrong {title_words}\n\n" + "\n".join(body) + "\n"


@pytest.fixture
def two_topic_repo(tmp_path: Path) -> Path:
    root = write_repo(tmp_path / "repo")
    (root / "pkg" / "reminders.py").write_text(REMINDERS)
    (root / "pkg" / "uploads.py").write_text(UPLOADS)
    return root


def _first(make_service: ServiceFactory, root: Path, text: str) -> str:
    return make_service(root).get(tokens=1024, mentions=text).files[0].path


def test_the_title_is_the_first_line_of_a_longer_text() -> None:
    assert title_of("\n  Wrong total \nbody\n") == "Wrong total"
    assert title_of("one line only") == ""  # all title: the lexical lane has it
    assert len(title_of("x" * 10_000 + "\nbody")) == fusion.MAX_TITLE


def test_the_file_the_title_describes_leads(
    two_topic_repo: Path, make_service: ServiceFactory
) -> None:
    about_reminders = issue(REMINDER_WORDS, UPLOAD_WORDS)
    about_uploads = issue(UPLOAD_WORDS, REMINDER_WORDS)
    assert _first(make_service, two_topic_repo, about_reminders) == "pkg/reminders.py"
    assert _first(make_service, two_topic_repo, about_uploads) == "pkg/uploads.py"


def test_without_the_title_lane_both_issues_rank_alike(
    two_topic_repo: Path, make_service: ServiceFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The test above can fail: the two issues have the same words, so without
    the title lane they give the same leader."""
    monkeypatch.setattr(fusion, "W_TITLE", 0.0)
    first = _first(make_service, two_topic_repo, issue(REMINDER_WORDS, UPLOAD_WORDS))
    assert first == _first(make_service, two_topic_repo, issue(UPLOAD_WORDS, REMINDER_WORDS))
