"""Fixtures shared by every test folder (helpers live in bonsai_testing.py).

The whole run gets a private ``BONSAI_HOME`` before any test imports or counts
anything: code that falls back to the default home (the tiktoken rank-file
cache, ``bonsai_home()``) then writes into a temporary folder, never into the
user's ``~/.bonsai``. Tests that need their own home still make one.

The suite starts well over a thousand Python processes (daemons, ``bonsai``
commands, workers). Where ``PYTHONDONTWRITEBYTECODE`` is set (as on the machines
that run it) none of them writes bytecode, so each one compiled every bonsai
module it imported from source again: the package is compiled once, here, and
they all read it (an edited source is still compiled afresh: the cached file
records the source's mtime and size).
"""

import compileall
import os
import shutil
import tempfile
from pathlib import Path

import pytest

import bonsai
from bonsai_testing import home, stdio_client

__all__ = ["home", "stdio_client"]

_RUN_HOME = tempfile.mkdtemp(prefix="bonsai-test-home-")


def pytest_configure(config: pytest.Config) -> None:
    os.environ["BONSAI_HOME"] = _RUN_HOME
    compileall.compile_dir(Path(bonsai.__file__).parent, quiet=2)  # skips what is current


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_RUN_HOME, ignore_errors=True)
