"""Fixtures shared by every test folder (helpers live in bonsai_testing.py).

The whole run gets a private ``BONSAI_HOME`` before any test imports or counts
anything: code that falls back to the default home (the tiktoken rank-file
cache, ``bonsai_home()``) then writes into a temporary folder, never into the
user's ``~/.bonsai``. Tests that need their own home still make one.
"""

import os
import shutil
import tempfile

import pytest

from bonsai_testing import home, stdio_client

__all__ = ["home", "stdio_client"]

_RUN_HOME = tempfile.mkdtemp(prefix="bonsai-test-home-")


def pytest_configure(config: pytest.Config) -> None:
    os.environ["BONSAI_HOME"] = _RUN_HOME


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_RUN_HOME, ignore_errors=True)
