"""CPU per call of the attachment rule at 100, 1,000 and 5,000 messages, before and after.

The history is the real trajectory corpus laid end to end as one long session
(each trajectory's task a question, its assistant messages answers, its
observations tool results), cut at each size. Two calls are timed, each once
warm (its terms already seen, as a repeated view of the tree finds them):

- **view**: every question's decision (``bonsai/tree/get``, ``decide_all``);
- **arrival**: the newest question's decision only (``tree.attach = "topic"``
  records it when the question arrives). Before, the daemon computed every
  decision to keep the last; now it reads the nodes before the question once.

"Before" is ``core/history/attach.py`` at ``--before`` (a git revision), loaded
beside the current one in the same process, so load distorts both alike.

    .venv/bin/python bench/attach_rule.py --before 0ae6d7a [--sizes 100,1000,5000]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from bonsai.core.history import attach

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path("/work/shared/corpus/mini-swe-agent-gemini")
MODULE = "server/bonsai/core/history/attach.py"


def old_module(rev: str) -> ModuleType:
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:{MODULE}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    spec = importlib.util.spec_from_loader("attach_before", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["attach_before"] = module  # dataclasses look their module up
    exec(compile(source, f"{rev}:{MODULE}", "exec"), module.__dict__)
    return module


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def history(module: ModuleType, size: int) -> list[Any]:
    """``size`` nodes of the corpus as one session, as ``module``'s ``AttachNode``."""
    out: list[Any] = []
    for path in sorted(CORPUS.glob("*.json")):
        question = answer = None
        for message in json.loads(path.read_text())["messages"]:
            role, text, node_id = message.get("role"), text_of(message), f"n{len(out)}"
            if role == "user" and question is None and answer is None:
                question = node_id
                out.append(module.AttachNode(node_id, "question", text))
            elif role == "assistant":
                out.append(module.AttachNode(node_id, "answer", text, parent=question))
                question, answer = None, node_id
            elif role == "user" and answer is not None:
                out.append(module.AttachNode(node_id, "tool_result", text, answer=answer))
            if len(out) == size:
                return out
    raise SystemExit(f"the corpus holds fewer than {size} messages")


def view(module: ModuleType, nodes: list[Any]) -> object:
    return module.decide_all(nodes)


def arrival_before(module: ModuleType, nodes: list[Any]) -> object:
    return module.decide_all(nodes)[last_question(nodes).id]


def arrival_after(module: ModuleType, nodes: list[Any]) -> object:
    vocab, newest = module.Vocabulary(), last_question(nodes)
    for node in nodes:
        if node is newest:
            return module.decide(node.text, vocab)
        vocab.add(node)
    raise AssertionError("no question")


def last_question(nodes: list[Any]) -> Any:
    return next(n for n in reversed(nodes) if n.role == "question")


def cpu(call: Any, module: ModuleType, nodes: list[Any]) -> tuple[float, object]:
    call(module, nodes)  # warm: terms seen, as a repeated view finds them
    start = time.process_time()
    result = call(module, nodes)
    return time.process_time() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="git revision of the old rule")
    parser.add_argument("--sizes", default="100,1000,5000")
    args = parser.parse_args()
    old = old_module(args.before)
    print("| messages | call | before (CPU s) | after (CPU s) | ratio | same decisions |")
    print("|---|---|---|---|---|---|")
    for size in (int(s) for s in args.sizes.split(",")):
        for name, before_call, after_call in (
            ("view", view, view),
            ("arrival", arrival_before, arrival_after),
        ):
            t_old, r_old = cpu(before_call, old, history(old, size))
            t_new, r_new = cpu(after_call, attach, history(attach, size))
            same = repr(r_old) == repr(r_new)
            print(
                f"| {size:,} | {name} | {t_old:.3f} | {t_new:.3f} | "
                f"×{t_old / max(t_new, 1e-9):.1f} | {'yes' if same else 'NO'} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
