"""bonsai/repomap/get through the daemon: progress, ranking by mentions, and the prefix."""

from __future__ import annotations

from pathlib import Path

from pytest_lsp import LanguageClient

from bonsai_testing import rpc


def make_repo(root: Path, files: int = 40) -> Path:
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    for i in range(files):
        (pkg / f"mod{i:02d}.py").write_text(
            f"def helper_{i}(x):\n    return x + {i}\n\n\nclass Widget{i}:\n    def run(self):\n"
            f"        return helper_{i}(1)\n"
        )
    (pkg / "billing.py").write_text(
        "def compute_invoice_total(lines):\n    return sum(l.amount for l in lines)\n"
    )
    return root


async def test_repomap_reports_progress_and_ranks_what_the_user_names(
    stdio_client: LanguageClient, tmp_path: Path
) -> None:
    ws = make_repo(tmp_path / "ws")
    result = await rpc(
        stdio_client,
        "bonsai/repomap/get",
        {
            "workspace": str(ws),
            "tokens": 200,
            "mentions": "compute_invoice_total gives the wrong sum",
        },
    )
    assert "compute_invoice_total" in result["text"]
    assert result["files"][0]["path"] == "pkg/billing.py"
    assert result["tokens"] <= 210
    reports = stdio_client.progress_reports
    assert reports, "a full build reports $/progress"
    values = next(iter(reports.values()))
    kinds = [getattr(v, "kind", None) for v in values]
    assert kinds[0] == "begin" and kinds[-1] == "end"
    again = await rpc(
        stdio_client,
        "bonsai/repomap/get",
        {
            "workspace": str(ws),
            "tokens": 200,
            "mentions": "compute_invoice_total gives the wrong sum",
        },
    )
    assert again["text"] == result["text"], "identical inputs, identical bytes"
