"""Every secret pattern through every path out of the daemon.

A workspace full of secrets (one of each shape the redaction engine promises,
plus the daemon's own key in a shape no pattern knows) is read whole and by
line ranges, grepped, printed by ``bash``, recalled from a memory file and
echoed by the provider in an error inside the stream. None of the secret
values may then appear in the simulator's recorded requests, the database
files (with the WAL), the logs, or any notification a client received.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from security_helpers import call, make_rig

from bonsai.core.redaction import redact
from bonsai.sim import Script
from bonsai.sim.faults import Fault
from bonsai.sim.script import Reply, Rule
from bonsai_testing import rpc

DAEMON_KEY = "corp-gateway-7Hq2-Zx81-PLAIN-KEY"  # the daemon's own key, no known shape
AGE_KEY = "AGE-SECRET-KEY-1" + ("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2)[:58]  # bech32

# name -> (a line holding the secret, the secret itself)
CORPUS: dict[str, tuple[str, str]] = {
    "env": ("DB_PASSWORD=env-Passw0rd-81x", "env-Passw0rd-81x"),
    "shell": ("export SERVICE_TOKEN='shell-t0ken-value-93'", "shell-t0ken-value-93"),
    "json": ('{"password": "json-Passw0rd-value"}', "json-Passw0rd-value"),
    "yaml": ("  client_secret: yaml-s3cret-value-41", "yaml-s3cret-value-41"),
    "toml": ('api_key = "toml-k3y-value-5521"', "toml-k3y-value-5521"),
    "ini": (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    "aws_id": ("key id AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE"),
    "ghp": ("ghp_" + "a1B2" * 9, "ghp_" + "a1B2" * 9),
    "gho": ("gho_" + "c3D4" * 9, "gho_" + "c3D4" * 9),
    "ghu": ("ghu_" + "e5F6" * 9, "ghu_" + "e5F6" * 9),
    "ghs": ("ghs_" + "g7H8" * 9, "ghs_" + "g7H8" * 9),
    "ghr": ("ghr_" + "i9J0" * 9, "ghr_" + "i9J0" * 9),
    "github_pat": (
        "github_pat_11AAAAAAA0123456789_" + "k" * 59,
        "github_pat_11AAAAAAA0123456789_" + "k" * 59,
    ),
    "slack": (
        "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp",
        "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp",
    ),
    "stripe": ("sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"),
    "google": (
        "AIza" + "SyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",
        "AIza" + "SyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",
    ),
    "jwt": (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
    "openai": ("sk-proj-" + "Ab12" * 10, "sk-proj-" + "Ab12" * 10),
    "anthropic": ("sk-ant-api03-" + "Cd34" * 10, "sk-ant-api03-" + "Cd34" * 10),
    "deepseek": ("sk-" + "0123456789abcdef" * 2, "sk-" + "0123456789abcdef" * 2),
    "huggingface": (
        "HF_HUB=hf_" + "Qw3rTy7uIoP1aSdF" * 2 + "gH",
        "hf_" + "Qw3rTy7uIoP1aSdF" * 2 + "gH",
    ),
    "shopify": ("shpat_" + "0a1b2c3d4e5f6789" * 2, "shpat_" + "0a1b2c3d4e5f6789" * 2),
    "digitalocean": ("dop_v1_" + "9f8e7d6c5b4a3210" * 4, "dop_v1_" + "9f8e7d6c5b4a3210" * 4),
    "telegram": (
        "bot = Bot('5512345678:AAF" + "x7Yq2Lm9Pz4Rt8Kw" * 2 + "')",
        "AAF" + "x7Yq2Lm9Pz4Rt8Kw" * 2,
    ),
    "discord": (
        "curl -d @m.json https://discord.com/api/webhooks/112233445566778899/"
        + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe" * 2,
        "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe" * 2,
    ),
    "basic_header": ("Authorization: Basic cmVsZWFzZTpzM2NyM3RwYXNz", "cmVsZWFzZTpzM2NyM3RwYXNz"),
    "docker_auth": (
        '{"auths": {"ghcr.io": {"auth": "Ym90OmdocF9zZWNyZXQ="}}}',
        "Ym90OmdocF9zZWNyZXQ=",
    ),
    # shapes the engine missed until the tenth round's pass (each leaked by every path)
    "slack_app": (
        "SLACK_APP=xapp-1-A0123456789-1234567890123-" + "0a1b2c3d" * 8,
        "xapp-1-A0123456789-1234567890123-" + "0a1b2c3d" * 8,
    ),
    "npm": ("//registry: npm_" + "aB3dE5gH7jK9" * 3, "npm_" + "aB3dE5gH7jK9" * 3),
    "stripe_webhook": ("whsec_" + "Ab12Cd34" * 4, "whsec_" + "Ab12Cd34" * 4),
    "docker_pat": ("docker login -p dckr_pat_" + "Xy9Zw8" * 5, "dckr_pat_" + "Xy9Zw8" * 5),
    "google_oauth": (
        "GOCSPX-" + "Ab12Cd34Ef56Gh78Ij90Kl12Mn34",
        "GOCSPX-" + "Ab12Cd34Ef56Gh78Ij90Kl12Mn34",
    ),
    "google_access": ("ya29.a0Af" + "Ab12Cd34" * 8, "ya29.a0Af" + "Ab12Cd34" * 8),
    "grafana": ("glsa_" + "Ab12Cd34" * 4 + "_0a1b2c3d", "glsa_" + "Ab12Cd34" * 4 + "_0a1b2c3d"),
    "groq": ("gsk_" + "Ab12Cd34" * 6 + "Ef56", "gsk_" + "Ab12Cd34" * 6 + "Ef56"),
    "xai": ("xai-" + "Ab12Cd34" * 10, "xai-" + "Ab12Cd34" * 10),
    "perplexity": ("pplx-" + "0a1b2c3d" * 6, "pplx-" + "0a1b2c3d" * 6),
    "replicate": ("r8_" + "Ab12Cd34" * 5, "r8_" + "Ab12Cd34" * 5),
    "linear": ("lin_api_" + "Ab12Cd34" * 5, "lin_api_" + "Ab12Cd34" * 5),
    "notion": ("ntn_" + "1234567890ab" + "Ab12Cd34" * 4, "ntn_" + "1234567890ab" + "Ab12Cd34" * 4),
    "age": (AGE_KEY, AGE_KEY),
    "square": ("sq0atp-" + "Ab12Cd34Ef56Gh78Ij90Kl", "sq0atp-" + "Ab12Cd34Ef56Gh78Ij90Kl"),
    "url_password": ("REDIS_URL=redis://:r3dis-Passw0rd-77@cache:6379/0", "r3dis-Passw0rd-77"),
    "curl_user": ("curl -u deploy:curlPassw0rd-55 https://api.example.com", "curlPassw0rd-55"),
    "password_flag": ("pg_dump --password=flagPassw0rd-66 prod", "flagPassw0rd-66"),
    "mysql": ("mysql -uroot -pMyS3cretPass-1 prod < dump.sql", "MyS3cretPass-1"),
    "daemon_key": (f"the gateway key is {DAEMON_KEY}", DAEMON_KEY),
}
PEM_BODY = "MIIEpAIBAAKCAQEAuSecretPemBodyLine0001"
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\nMIIEsecondLineOfTheKeyBody0002\n"  # no END
SECRET_VALUES = {name: value for name, (_, value) in CORPUS.items()} | {"pem": PEM_BODY}

MEMORY = """---
name: release-credentials
description: How the release pipeline signs the artefacts for the nightly channel
type: project
created: 2026-11-01
updated: 2026-11-01
---
The nightly release signs with {line}.
"""


def test_the_engine_redacts_every_corpus_line_and_keeps_line_count() -> None:
    for name, (line, secret) in CORPUS.items():
        out = redact(line, [DAEMON_KEY] if name == "daemon_key" else [])
        assert secret not in out.text and "[REDACTED]" in out.text, name
    for prefix in ("12:", "path/to/.env:12: ", "    12\t"):
        for name in ("env", "json", "yaml", "toml", "ini"):
            line, secret = CORPUS[name]
            assert secret not in redact(prefix + line).text, (prefix, name)
    cut = redact(PEM + "more text after a cut")
    assert PEM_BODY not in cut.text and cut.text.count("\n") == PEM.count("\n")


def test_ordinary_code_and_output_are_left_alone() -> None:
    for text in (
        "for key, value in items.items():",
        "self.password = password",
        "max_tokens: 4096",
        "def tokenize(text): return text.split()",
        "secret_key = os.environ['SECRET_KEY']",
        "password: str",
        "git checkout -b feature/auth-tokens",
        'author="Steven Loria",',
        "    token: String,",
        "const octokit = new Octokit({ auth: process.env.GITHUB_TOKEN });",
        "from huggingface_hub import hf_hub_download",
        "We use basic authentication; the Authorization header is set by requests.",
        'config = {"auth": "token"}',
        "at 12:34:56 the AAA battery",
        "git push -u origin main",
        "docker run -u 1000:1000 --rm image",
        "pg_dump --password-file /run/secrets/db prod",
        "psql --password $DB_PASSWORD",
        "mysql -u root -p prod",
        "npm_config_cache=/tmp/npm",
        "see https://example.com:8080/path@v2",
    ):
        assert redact(text).text == text, text


def test_an_error_code_before_its_message_is_not_a_secret() -> None:
    for text in (
        "openai rejected the credentials: invalid_request_error: Incorrect API key provided",
        "anthropic rejected the credentials: authentication_error: invalid x-api-key",
        "x: invalid_api_key: Incorrect API key provided",
        "token: insufficient_quota: You exceeded your current quota",
    ):
        assert redact(text).text == text, text
    # the same shapes with a real-looking value are still assignments
    for line, secret in (
        ("api_key: sk-live-4eC39HqLyjWDarjtT1zdp7dc", "sk-live-4eC39HqLyjWDarjtT1zdp7dc"),
        ("API_KEY=abcdEFGH1234ijkl5678", "abcdEFGH1234ijkl5678"),
        ("OPENAI_API_KEY=sk_live_abc: rest", "sk_live_abc:"),
        ("credentials: prod_key_9f3a: rotated yesterday", "prod_key_9f3a"),
        ("password: hunter_two_x1: old", "hunter_two_x1"),
        ("client_secret: s3cret_value_41:", "s3cret_value_41"),
        ("token: invalid_api_key_value", "invalid_api_key_value"),
    ):
        out = redact(line).text
        assert secret not in out and "[REDACTED]" in out, line


async def test_a_rejected_key_reads_as_the_provider_said_it(home: Path, tmp_path: Path) -> None:
    """A 401 shows the provider's error code and message; only the echoed key is removed."""
    echo = Fault(kind="auth", message=f"Incorrect API key provided: {DAEMON_KEY}.")
    script = Script(faults={1: echo}, steps=[Reply(text="unreachable")])
    env = {"BONSAI_PROVIDER": "openai", "OPENAI_API_KEY": DAEMON_KEY}
    async with make_rig(script, home, tmp_path, **env) as rig:
        failed = await rig.turn(await rig.session(), "hello")
    message = failed[-1]["message"]
    assert failed[-1]["kind"] == "error", failed[-1]
    assert "rejected the credentials: invalid_request_error: Incorrect API key provided" in message
    assert "Incorrect API key provided: [REDACTED]" in message and DAEMON_KEY not in message


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    lines = [line for line, _ in CORPUS.values()]
    (ws / "secrets.txt").write_text("\n".join(lines) + "\n" + PEM)
    (ws / "config.json").write_text(json.dumps({"database": {"password": "json-Passw0rd-value"}}))
    memory = ws / ".bonsai" / "memory"
    memory.mkdir(parents=True)
    (memory / "release-credentials.md").write_text(MEMORY.format(line=CORPUS["ghp"][0]))
    return ws


async def test_no_secret_leaves_the_daemon_by_any_path(home: Path, workspace: Path) -> None:
    n = len(CORPUS)
    tokens = " ".join(CORPUS[k][0] for k in ("ghp", "github_pat", "openai", "aws_id", "jwt"))
    fault = Fault(
        kind="stream_error", after_events=1, message=f"upstream said {{api_key}} {tokens}"
    )
    script = Script(
        steps=[
            Reply(
                tool_calls=[
                    call("read_file", path="secrets.txt"),
                    call("read_file", path="secrets.txt", offset=n + 1, limit=2),  # cut PEM
                    call("read_file", path="secrets.txt", offset=3, limit=4),
                    call("read_file", path="config.json"),
                    call("grep", pattern="."),
                    call("grep", pattern="key|gateway|BEGIN|PASSWORD", path="secrets.txt"),
                    call("bash", command="cat secrets.txt; printenv OPENAI_API_KEY"),
                    call("bash", command="env | grep -i api_key; echo done"),
                ]
            ),
            Reply(text="All read."),
        ],
        rules=[Rule(match="BREAK THE STREAM", fault=fault)],
    )
    env = {"BONSAI_PROVIDER": "openai", "OPENAI_API_KEY": DAEMON_KEY}
    async with make_rig(script, home, workspace, **env) as rig:
        sid = await rig.session()
        events = await rig.turn(sid, "how does the release pipeline sign the nightly artefacts?")
        assert events[-1]["kind"] == "done", events[-1]
        results = rig.tool_results(events)
        assert len(results) == 8
        for r in results[:7]:
            assert "[REDACTED]" in r["result"], r["result"]
        memory_notes = [
            m for m in rig.sim.requests[0].body["messages"] if "release pipeline signs" in str(m)
        ]
        assert memory_notes, "the memory entry was recalled (and redacted)"
        failed = await rig.turn(sid, "BREAK THE STREAM now")
        assert failed[-1]["kind"] == "error" and "mid-stream" in failed[-1]["message"]
        views = [
            await rpc(rig.client, "bonsai/session/attach", {"sessionId": sid}),
            await rpc(rig.client, "bonsai/ctx/get", {"sessionId": sid}),
            await rpc(rig.client, "bonsai/ctx/get", {"sessionId": sid, "view": "wire"}),
        ]
        viewed = json.dumps(views)
        for name, secret in SECRET_VALUES.items():
            assert rig.leaks(secret) == [], name
            assert secret not in viewed, f"{name} in the ledger or wire view"
