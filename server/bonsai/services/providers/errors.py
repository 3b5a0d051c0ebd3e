"""Map HTTP statuses and transport exceptions to ``ProviderError``.

One place decides which failures are retryable and what the user reads.
Every message is redacted before it leaves this module.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Literal

import httpx

from bonsai.services.providers.html_page import is_html, one_line, page_summary
from bonsai.services.providers.retry import parse_retry_after
from bonsai.services.providers.types import ErrorKind, ProviderError
from bonsai.services.redaction import redact_error

Phase = Literal["open", "body"]


def provider_message(body: bytes) -> str:
    """The human part of an error body, in one line: for the JSON shapes providers use,
    and for the HTML page a proxy or gateway sends in their place."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        if is_html(text):
            return page_summary(text)
        return one_line(text) or "(empty response body)"
    if not isinstance(data, dict):
        return one_line(text)
    err = data.get("error")
    if isinstance(err, dict) and err.get("message"):
        kind = err.get("type")
        msg = str(err["message"])
        return f"{kind}: {msg}" if isinstance(kind, str) and kind not in msg else msg
    if isinstance(err, str):
        return err
    for key in ("detail", "message"):
        if data.get(key):
            return str(data[key])
    return text[:200]


def _status_kind(status: int) -> ErrorKind:
    if status in (401, 403):
        return "auth"
    if status == 429:
        return "rate_limit"
    if status == 408:
        return "timeout"
    if status >= 500:
        return "server"
    return "bad_request"


def _retry_after(headers: Mapping[str, str], now: float) -> float | None:
    """OpenAI may send ``retry-after-ms`` next to (and more precise than) ``retry-after``."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    return parse_retry_after(headers.get("retry-after"), now)


def error_from_status(
    label: str,
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    *,
    secrets: Iterable[str],
    now: float,
) -> ProviderError:
    kind = _status_kind(status)
    detail = redact_error(provider_message(body), secrets)
    retry_after = None if kind == "auth" else _retry_after(headers, now)
    prefix = {
        "auth": f"{label} rejected the credentials",
        "rate_limit": f"{label} rate limit reached",
        "server": f"{label} server error",
        "timeout": f"{label} timed out the request",
        "bad_request": f"{label} rejected the request",
    }[kind]
    return ProviderError(kind, f"{prefix}: {detail}", status=status, retry_after=retry_after)


def error_from_exception(
    label: str,
    exc: httpx.HTTPError,
    phase: Phase,
    *,
    secrets: Iterable[str],
    connect_timeout_s: float,
    read_timeout_s: float,
) -> ProviderError:
    cause = redact_error(f"{type(exc).__name__}: {exc}".rstrip(": "), secrets)
    if isinstance(exc, httpx.ConnectTimeout):
        msg = f"could not connect to {label} within {connect_timeout_s:g} s (connect_timeout_s)"
        return ProviderError("connect", msg)
    if isinstance(exc, httpx.ReadTimeout):
        msg = f"{label} sent nothing for {read_timeout_s:g} s (read_timeout_s)"
        return ProviderError("timeout", msg)
    if isinstance(exc, httpx.TimeoutException):
        return ProviderError("timeout", f"{label} request timed out ({cause})")
    if isinstance(exc, httpx.ConnectError):
        return ProviderError("connect", f"could not connect to {label} ({cause})")
    if phase == "body":
        return ProviderError("broken_stream", f"{label} stream broke off midway ({cause})")
    return ProviderError("connect", f"{label} connection failed before a response ({cause})")


def cancelled_error(label: str) -> ProviderError:
    return ProviderError("cancelled", f"{label} provider was closed while a call was in flight")
