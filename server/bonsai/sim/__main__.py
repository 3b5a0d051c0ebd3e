"""``bonsai sim`` / ``python -m bonsai.sim``: the simulator on a port, with a script and faults.

``--fault N:KIND`` makes request N (1-based) fail with KIND (``rate_limit``,
``server_error``, ``drop``, ``malformed``, ``slow_first_byte``, ``auth``), on
top of the script's own faults; ``--require-api-key`` makes every request
without that key fail with 401, like a real provider.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from typing import cast, get_args

from bonsai.sim._tok import tokenizer_name
from bonsai.sim.faults import Fault, FaultKind
from bonsai.sim.script import Script, ScriptError, load_script
from bonsai.sim.server import Simulator

DEFAULT_PORT = 8787


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The simulator's options, shared by ``bonsai sim`` and ``python -m bonsai.sim``."""
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default loopback)")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 picks one)"
    )
    parser.add_argument("--script", help="JSON script file (steps, rules, faults)")
    parser.add_argument("--latency-ms", type=float, help="pause before each streamed event")
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="N:KIND",
        help=f"make request N fail with KIND ({', '.join(get_args(FaultKind))}); repeatable",
    )
    parser.add_argument(
        "--no-usage",
        action="store_true",
        help="stream OpenAI replies without usage (a server that ignores include_usage)",
    )
    parser.add_argument(
        "--require-api-key",
        metavar="KEY",
        help="answer 401 to every request that does not present this key",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bonsai sim",
        description="Run the bonsai LLM provider simulator (OpenAI and Anthropic wires).",
    )
    add_arguments(parser)
    return parser


def _faults(specs: list[str]) -> dict[int, Fault]:
    out: dict[int, Fault] = {}
    kinds = get_args(FaultKind)
    for spec in specs:
        number, _, kind = spec.partition(":")
        if not number.strip().isdigit() or int(number) < 1 or kind not in kinds:
            raise ScriptError(
                f"--fault {spec!r}: expected N:KIND with N ≥ 1 and KIND one of {', '.join(kinds)}"
            )
        out[int(number)] = Fault(kind=cast(FaultKind, kind))
    return out


async def _serve(script: Script, host: str, port: int) -> None:
    sim = Simulator(script, host=host, port=port)
    await sim.start()
    print(
        f"bonsai sim listening on {sim.base_url} (OpenAI base URL {sim.openai_base_url}, "
        f"tokenizer {tokenizer_name()})",
        flush=True,
    )
    try:
        await asyncio.Event().wait()
    finally:
        await sim.stop()


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted with the options of :func:`add_arguments`."""
    try:
        script = load_script(args.script) if args.script else Script()
        faults = _faults(args.fault)
    except ScriptError as exc:
        print(f"bonsai sim: {exc}", file=sys.stderr)
        return 2
    update: dict[str, object] = {"faults": {**script.faults, **faults}}
    if args.latency_ms is not None:
        update["latency_ms"] = max(args.latency_ms, 0.0)
    if args.require_api_key:
        update["require_api_key"] = args.require_api_key
    if args.no_usage:
        update["usage"] = False
    script = script.model_copy(update=update)
    try:
        asyncio.run(_serve(script, args.host, args.port))
    except KeyboardInterrupt:
        return 0
    except OSError as exc:
        print(
            f"bonsai sim: cannot listen on {args.host}:{args.port}: {exc.strerror}", file=sys.stderr
        )
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run(_parser().parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
