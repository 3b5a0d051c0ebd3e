"""A loopback TCP relay that stamps when each HTTP request reaches it and when the
server's first response byte comes back (``bench/real_server.py`` runs it in its
own process, so every measured client pays the same extra hop and none of them
shares its event loop).

    python bench/timing_proxy.py UPSTREAM_PORT

Prints ``port N`` once, then one line per request: ``req <time.time()>`` when a
chunk from the client starts with an HTTP method, ``resp <time.time()>`` at the
every further chunk of that request (``more``), ``resp`` at the first upstream chunk after it, ``tok <time.time()>`` at the first one that carries
text (a ``"content": "…"`` that is not empty).
"""

from __future__ import annotations

import asyncio
import re
import sys
import time

FIRST_TEXT = re.compile(rb'"content":\s*"[^"]')  # a streamed chunk that carries text
METHODS = (b"GET ", b"POST ", b"PUT ", b"DELETE ", b"HEAD ")


async def _pipe(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    upstream: bool,
    state: dict[str, bool],
) -> None:
    try:
        while chunk := await reader.read(65536):
            now = time.time()
            if not upstream and chunk.startswith(METHODS):
                print(f"req {now:.6f} {chunk.split(b' ', 2)[1].decode()}", flush=True)
                state["waiting"] = True
            elif not upstream and state.get("waiting"):
                print(f"more {now:.6f}", flush=True)  # the rest of the request (its body)
            elif upstream and state.get("waiting"):
                print(f"resp {now:.6f}", flush=True)
                state["waiting"] = False
                state["token"] = True
            if upstream and state.get("token") and FIRST_TEXT.search(chunk):
                print(f"tok {now:.6f}", flush=True)
                state["token"] = False
            writer.write(chunk)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


async def _serve(upstream_port: int) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", upstream_port)
        state: dict[str, bool] = {}
        await asyncio.gather(
            _pipe(reader, up_writer, False, state), _pipe(up_reader, writer, True, state)
        )

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(f"port {server.sockets[0].getsockname()[1]}", flush=True)
    await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(_serve(int(sys.argv[1])))
