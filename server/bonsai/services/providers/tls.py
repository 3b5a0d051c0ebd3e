"""One TLS context for every provider client.

Building an ``ssl.SSLContext`` loads the whole CA bundle (tens of milliseconds of
CPU); httpx builds one per ``AsyncClient`` unless it is given one, and the daemon
makes a client per turn, on the event loop that streams every session. The
context is built once per CA setting (``SSL_CERT_FILE``, ``SSL_CERT_DIR``, read as
httpx reads them) and shared: a context is safe to use from many connections.
"""

from __future__ import annotations

import functools
import os
import ssl

import httpx


def ssl_context() -> ssl.SSLContext:
    """The shared context for the CA setting in force now."""
    return _context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.lru_cache(maxsize=4)
def _context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    return httpx.create_ssl_context()  # reads the same variables
