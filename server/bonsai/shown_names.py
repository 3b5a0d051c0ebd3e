"""File names as bonsai shows them: one name, one line, whatever the repository holds.

The tools (``list_dir``, ``glob``, ``grep``, ``read_file``), the repository map and
the volatile tail's ``git status`` lines all show names through ``shown_name``.

A name may carry a newline (``"a.py\\nb.py"`` would read as two files), a
carriage return, an escape sequence, a bidirectional override that reverses how
it reads, or bytes that are not UTF-8. Such a name is shown as a JSON string
literal (quoted, escaped), which is exactly what the model writes back in a
tool call's JSON arguments to name that file. Ordinary names are left as they are.
"""

from __future__ import annotations

import json
import unicodedata

# control, format (bidi overrides, zero-width), surrogate (undecodable bytes), unassigned
_ODD = frozenset({"Cc", "Cf", "Cs", "Cn", "Zl", "Zp"})


def shown_name(name: str) -> str:
    """``name`` as is, or as a JSON string literal when it holds an odd character."""
    if name.isascii() and name.isprintable():
        return name
    if any(unicodedata.category(ch) in _ODD for ch in name):
        return json.dumps(name)
    return name
