"""What session code needs of the daemon, as protocols the daemon implements.

Session code never imports ``bonsai.daemon``: it is handed a :class:`Host`
(the daemon, in production) and talks to clients only through its
:class:`EventSink` half.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import apsw

from bonsai.protocol.models import Wire
from bonsai.services.config import LoadedSettings
from bonsai.services.store.sessions import SessionStore
from bonsai.session.service_pool import ServicePool

if TYPE_CHECKING:  # the hub names Host in annotations only (no cycle at run time)
    from bonsai.session.hub import SessionHub


class Subscriber(Protocol):
    """One connected client, as session code sees it."""

    @property
    def id(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def name(self) -> str: ...  # the editor, in words ("VS Code"), or ""
    @property
    def attached(self) -> set[str]: ...

    def notify(self, method: str, params: Wire | dict[str, Any]) -> None: ...
    def notify_lsp(self, method: str, params: Any) -> None: ...
    async def request(self, method: str, params: Wire, timeout: float) -> Any: ...
    async def request_lsp(self, method: str, params: Any, timeout: float) -> Any: ...


class EventSink(Protocol):
    """Where session events go: every client attached to a session, or all of them."""

    def broadcast(self, session_id: str, method: str, params: Wire) -> None: ...
    def broadcast_all(self, method: str, params: Wire) -> None: ...
    def subscribers(self, session_id: str) -> Sequence[Subscriber]: ...
    def clients(self) -> Sequence[Subscriber]: ...


class Host(EventSink, Protocol):
    """The daemon as session code sees it: storage, settings, pools, the hub, the sink."""

    @property
    def home(self) -> Path: ...
    @property
    def db(self) -> apsw.Connection: ...
    @property
    def store(self) -> SessionStore: ...
    @property
    def hub(self) -> SessionHub: ...

    def settings(self, workspace: str | None = None) -> LoadedSettings: ...
    def pool(self, kind: str, close: Callable[[Any], None]) -> ServicePool[Any]: ...
