"""``python -m bonsai.sim --port N [--script FILE] [--latency-ms X]``."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from bonsai.sim._tok import tokenizer_name
from bonsai.sim.script import Script, ScriptError, load_script
from bonsai.sim.server import Simulator

DEFAULT_PORT = 8787


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bonsai sim",
        description="Run the bonsai LLM provider simulator (OpenAI and Anthropic wires).",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default loopback)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="0 picks a free port")
    parser.add_argument("--script", help="JSON script file (steps, rules, faults)")
    parser.add_argument("--latency-ms", type=float, help="pause before each streamed event")
    return parser


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


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        script = load_script(args.script) if args.script else Script()
    except ScriptError as exc:
        print(f"bonsai sim: {exc}", file=sys.stderr)
        return 2
    if args.latency_ms is not None:
        script = script.model_copy(update={"latency_ms": max(args.latency_ms, 0.0)})
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


if __name__ == "__main__":
    raise SystemExit(main())
