"""What an HTML page says, in one line: a proxy, gateway or sign-in portal in front of
a provider answers with a web page where the API answers with JSON or events, and the
user should read its title (``502 Bad Gateway``), never its markup."""

from __future__ import annotations

import re
from html.parser import HTMLParser

_START = re.compile(
    r"\A\s*(<!--.*?-->\s*)*<(!doctype\s+html|html[\s>]|head[\s>]|title[\s>])", re.I | re.S
)
_SPACE = re.compile(r"\s+")
_HIDDEN = frozenset({"script", "style", "noscript", "template"})
_MOST = 200
_READ = 64 * 1024  # a title is near the top; a huge page is not parsed whole


class _Reader(HTMLParser):
    """The page's title, first heading and visible text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title: list[str] = []
        self.heading: list[str] = []
        self.text: list[str] = []
        self._open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._open:
            del self._open[len(self._open) - 1 - self._open[::-1].index(tag) :]

    def handle_data(self, data: str) -> None:
        if any(tag in _HIDDEN for tag in self._open):
            return
        if "title" in self._open:
            self.title.append(data)
        elif "h1" in self._open:
            self.heading.append(data)
        else:
            self.text.append(data)


def one_line(text: str) -> str:
    """``text`` with its runs of white space as one space, at most 200 characters."""
    flat = _SPACE.sub(" ", text).strip()
    return flat if len(flat) <= _MOST else flat[: _MOST - 1] + "…"


def is_html(text: str) -> bool:
    return _START.match(text) is not None


def page_summary(text: str) -> str:
    """``HTML page "502 Bad Gateway"``: the title, else the first heading, else the
    start of the visible text."""
    reader = _Reader()
    reader.feed(text[:_READ])
    reader.close()
    for part in (reader.title, reader.heading, reader.text):
        said = one_line("".join(part))
        if said:
            return f'HTML page "{said}"'
    return "HTML page (no title)"
