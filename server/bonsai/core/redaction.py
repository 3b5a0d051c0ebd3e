"""The one redaction engine: secrets out of every text bonsai stores or sends.

Pure: a text and the daemon's own key values in, the redacted text out.

The pattern set comes from the maintained ``detect-secrets`` plugins (their
``denylist`` regexes and the keyword plugin's word list), compiled once, at a
process's first redaction (a process that never redacts never imports the
library); by hand there is only the glue: rules the library lacks or keeps too
narrow (``github_pat_``, Google API keys, provider key shapes, Stripe test keys,
Hugging Face, Shopify, DigitalOcean, Telegram and Discord tokens, Slack app
tokens, npm, Stripe webhook, Docker, Google OAuth, Grafana, Groq, xAI,
Perplexity, Replicate, Linear, Notion, Square and age keys, a URL's password
with no user, ``curl -u``, ``--password=`` and ``mysql -p`` passwords,
basic-auth headers and config ``"auth"`` values, bearer tokens, a PEM block with
no END in view), the assignment rule (env,
shell, JSON, YAML, TOML; tolerant of ``N:`` and ``path:N:`` prefixes because it
anchors on the name, not the line start), and the daemon-key rule (by value,
whatever its shape).

Every rule is gated by its anchors (literals every match contains), all found
in one Aho-Corasick pass over the text and one over its lowered form, so that a
text with nothing key-like costs two scans; a rule's regex runs only around its
anchors' hits. A replacement keeps the
number of lines it covers, so line numbers added afterwards stay true.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import cast

from ahocorasick_rs import AhoCorasick, BytesAhoCorasick

REDACTED = "[REDACTED]"
MIN_SECRET_CHARS = 8  # shorter configured "keys" (EMPTY, dummy, none) are placeholders, not secrets

# detect-secrets plugins not used: IP addresses are not secrets; Artifactory's
# and the JWT plugin's bare regexes match ordinary words (the library confirms
# them with checks we do not run); private keys get the wider rule below;
# Discord and Telegram shapes have no literal to anchor on (each would cost a
# full regex scan of every output).
_SKIPPED_PLUGINS = frozenset(
    {
        "IPPublicDetector",
        "ArtifactoryDetector",
        "JwtTokenDetector",
        "PrivateKeyDetector",
        "DiscordBotTokenDetector",
        "TelegramBotTokenDetector",
        # narrower forms of the hand rules below (which find all they find)
        "GitHubTokenDetector",
        "OpenAIDetector",
        "StripeDetector",
    }
)
# Literals one of which every match of a plugin's patterns contains; for a
# case-insensitive pattern they are lower case and looked for in the lowered text.
_PLUGIN_ANCHORS: dict[str, tuple[str, ...]] = {
    "AWSKeyDetector": ("IA", "A3T", "AC"),  # ABIA AKIA ASIA, A3T, ACCA
    "AzureStorageKeyDetector": ("AccountKey=",),
    "BasicAuthDetector": ("://",),
    "CloudantDetector": ("cloudant",),
    "GitLabTokenDetector": ("gl", "GR13"),
    "IbmCloudIamDetector": (),
    "IbmCosHmacDetector": (),
    "MailchimpDetector": ("-us",),
    "NpmDetector": ("_authToken",),
    "PypiTokenDetector": ("pypi-",),
    "SendGridDetector": ("SG.",),
    "SlackDetector": ("xox", "hooks.slack"),
    "SoftlayerDetector": ("softlayer",),
    "SquareOAuthDetector": ("sq0csp-",),
    "TwilioKeyDetector": ("AC", "SK"),
}
# the same for the plugins' case-insensitive patterns (looked for in the lowered text)
_FOLDED_ANCHORS: dict[str, tuple[str, ...]] = {
    "AWSKeyDetector": ("aws",),
    "CloudantDetector": ("cloudant",),  # https://user:key@host.cloudant.com
    "SlackDetector": ("xox", "hooks.slack"),  # https://hooks.slack.com/services/...
    "SoftlayerDetector": ("softlayer",),  # https://api.softlayer.com/soap/...
}
# the keyword forms of vendor plugins (``cloudant_password = ...``) are covered by
# the assignment rule, which is built from the keyword plugin's own word list
_KEYWORD_FORM = "(?:(?<=\\W)|(?<=^))"


@dataclass(frozen=True)
class Rule:
    """A pattern searched only near its anchors: on each line holding one
    (``at`` None), or matched right at each one, ``at`` characters before it."""

    name: str
    pattern: re.Pattern[str]
    anchors: tuple[str, ...]
    at: int | None = None
    group: int | None = None  # redact this group's span instead of the whole match

    lower: bool = field(init=False, repr=False)  # its anchors are looked for in the lowered text

    def __post_init__(self) -> None:
        object.__setattr__(self, "lower", bool(self.pattern.flags & re.IGNORECASE))


@dataclass(frozen=True)
class Redaction:
    text: str
    count: int


# ---------------------------------------------------------------- the rules
def _library_rules() -> list[Rule]:
    # detect-secrets (with requests: ~11 MB, ~0.2 s of CPU) loads with the first redaction
    import detect_secrets.plugins
    from detect_secrets.plugins.base import RegexBasedDetector

    rules: list[Rule] = []
    for module_info in pkgutil.iter_modules(detect_secrets.plugins.__path__):
        module = importlib.import_module(f"detect_secrets.plugins.{module_info.name}")
        for name, plugin in inspect.getmembers(module, inspect.isclass):
            if (
                not issubclass(plugin, RegexBasedDetector)
                or plugin is RegexBasedDetector
                or plugin.__module__ != module.__name__
                or name in _SKIPPED_PLUGINS
            ):
                continue
            patterns = cast("Iterable[re.Pattern[str]]", plugin.denylist)
            for pattern in patterns:
                folded = bool(pattern.flags & re.IGNORECASE)
                anchors = (_FOLDED_ANCHORS if folded else _PLUGIN_ANCHORS).get(name, ())
                if not anchors or pattern.pattern.startswith(_KEYWORD_FORM):
                    continue
                group = 1 if pattern.groups >= 1 and _group_is_value(pattern) else None
                rules.append(Rule(f"detect-secrets:{name}", pattern, anchors, group=group))
    return rules


def _group_is_value(pattern: re.Pattern[str]) -> bool:
    """Whether group 1 is the secret itself (not a prefix alternation like ``(ghp|gho)``)."""
    head = pattern.pattern.split("(", 1)[0]
    return head != "" or pattern.pattern.startswith("(?:")


_PEM_HEAD = r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
_PEM_TAIL = r"-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
# A PEM block to its END line, or to the end of the text when no END is in view.
_PEM_ANCHOR = "PRIVATE KEY"
_PRIVATE_KEY = re.compile(rf"{_PEM_HEAD}(?:.*?{_PEM_TAIL}|.*\Z)", re.S)


def _marker_rules() -> list[Rule]:
    """The library's other private-key markers (PuTTY): to the next blank line."""
    from detect_secrets.plugins.private_key import PrivateKeyDetector  # with the first redaction

    rules = []
    head = re.compile(_PEM_HEAD.replace("-----BEGIN", "BEGIN").rstrip("-"))
    for marker in PrivateKeyDetector.denylist:
        if head.fullmatch(marker.pattern) is None:
            literal = marker.pattern.replace("\\", "")
            pattern = re.compile(re.escape(literal) + r".*?(?:\n[ \t]*\n|\Z)", re.S)
            rules.append(Rule("private-key", pattern, (literal,), at=0))
    return rules


_B = r"(?<![A-Za-z0-9_])"  # a word boundary before (seen even when matching at an offset)
_HAND_RULES = [
    Rule(
        "github",
        re.compile(rf"{_B}gh[pousr]_[A-Za-z0-9_]{{30,}}"),
        ("gh",),
        at=0,
    ),
    Rule("github-pat", re.compile(rf"{_B}github_pat_[A-Za-z0-9_]{{22,}}"), ("_pat_",), at=6),
    Rule("google-api-key", re.compile(rf"{_B}AIza[0-9A-Za-z_\-]{{35}}"), ("AIza",), at=0),
    Rule(
        "provider-key",  # OpenAI, Anthropic, DeepSeek, OpenRouter key shapes
        re.compile(rf"{_B}sk-(?:ant-|proj-|or-|svcacct-|admin-)?[A-Za-z0-9_\-]{{20,}}"),
        ("sk-",),
        at=0,
    ),
    Rule(
        "stripe",
        re.compile(rf"{_B}[rsp]k_(?:live|test)_[0-9A-Za-z]{{10,}}"),
        ("k_",),
        at=1,
    ),
    Rule("slack", re.compile(rf"{_B}xox[abposr]-[A-Za-z0-9\-]{{10,}}"), ("xox",), at=0),
    Rule(
        "jwt",
        re.compile(rf"{_B}eyJ[A-Za-z0-9_\-]{{8,}}\.[A-Za-z0-9_\-]{{8,}}\.[A-Za-z0-9_\-]*"),
        ("eyJ",),
        at=0,
    ),
    Rule(
        "bearer",
        re.compile(r"(?i)\bbearer\s+([A-Za-z0-9_\-.=+/~]{16,})"),
        ("bearer",),
        at=0,
        group=1,
    ),
    Rule("huggingface", re.compile(rf"{_B}hf_[A-Za-z0-9]{{34,}}"), ("hf_",), at=0),
    Rule("shopify", re.compile(rf"{_B}shp(?:at|ca|pa|ss)_[a-fA-F0-9]{{32}}"), ("shp",), at=0),
    Rule("digitalocean", re.compile(rf"{_B}do[opr]_v1_[a-f0-9]{{64}}"), ("_v1_",), at=3),
    Rule(  # a Telegram bot token: the bot's id, a colon, 34 or more characters starting AA
        "telegram-bot", re.compile(r"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_\-]{32,}"), (":AA",)
    ),
    Rule(  # a Discord webhook's token (the URL alone posts to the channel)
        "discord-webhook",
        re.compile(r"/api/webhooks/[0-9]{15,}/([A-Za-z0-9_\-]{30,})"),
        ("/api/webhooks/",),
        at=0,
        group=1,
    ),
    Rule(  # user:password in base64, as an HTTP header says it
        "basic-auth-header",
        re.compile(r"(?i)\bauthorization:\s*basic\s+([A-Za-z0-9+/]{8,}={0,2})"),
        ("authorization",),
        group=1,
    ),
    Rule(  # Slack app-level tokens (the bot and user ones are ``xox…``)
        "slack-app", re.compile(rf"{_B}xapp-[0-9]+-[A-Za-z0-9\-]{{20,}}"), ("xapp-",), at=0
    ),
    Rule("npm", re.compile(rf"{_B}npm_[A-Za-z0-9]{{36}}"), ("npm_",), at=0),
    Rule("stripe-webhook", re.compile(rf"{_B}whsec_[A-Za-z0-9]{{24,}}"), ("whsec_",), at=0),
    Rule("docker-pat", re.compile(rf"{_B}dckr_pat_[A-Za-z0-9_\-]{{20,}}"), ("dckr_pat_",), at=0),
    Rule(  # an OAuth client secret and an access token
        "google-oauth",
        re.compile(rf"{_B}(?:GOCSPX-[A-Za-z0-9_\-]{{28}}|ya29\.[A-Za-z0-9_\-]{{20,}})"),
        ("GOCSPX-", "ya29."),
        at=0,
    ),
    Rule(
        "grafana", re.compile(rf"{_B}gl(?:sa|c)_[A-Za-z0-9_\-+/=]{{32,}}"), ("glsa_", "glc_"), at=0
    ),
    Rule(  # Groq, xAI, Perplexity, Replicate
        "model-api-key",
        re.compile(
            rf"{_B}(?:gsk_[A-Za-z0-9]{{40,}}|xai-[A-Za-z0-9]{{40,}}|pplx-[A-Za-z0-9]{{40,}}"
            r"|r8_[A-Za-z0-9]{30,})"
        ),
        ("gsk_", "xai-", "pplx-", "r8_"),
        at=0,
    ),
    Rule("linear", re.compile(rf"{_B}lin_api_[A-Za-z0-9]{{32,}}"), ("lin_api_",), at=0),
    Rule("notion", re.compile(rf"{_B}ntn_[A-Za-z0-9]{{40,}}"), ("ntn_",), at=0),
    Rule(  # an age identity (bech32)
        "age-key",
        re.compile(r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
        ("AGE-SECRET-KEY-1",),
        at=0,
    ),
    Rule("square-token", re.compile(rf"{_B}sq0atp-[A-Za-z0-9_\-]{{22,}}"), ("sq0atp-",), at=0),
    Rule(  # a URL's password with no user name (redis://:pass@host), which the library misses
        "url-password",
        re.compile(r"\b[a-z][a-z0-9+.\-]*://:([^\s/@]{3,})@"),
        ("://:",),
        group=1,
    ),
    Rule(  # curl -u user:secret
        "curl-user",
        re.compile(r"\bcurl\b[^\n]*?\s(?:-u|--user)[ =]?['\"]?[^\s:'\"]+:(?!\$)([^\s'\"]{3,})"),
        ("curl",),  # on a curl line only: ``docker run -u 1000:1000`` is no password
        group=1,
    ),
    Rule(  # --password=… / --password … on a command line (a variable is not the secret)
        "password-flag",
        re.compile(
            r"--(?:password|passwd|client-secret|api-key|apikey)[= ]['\"]?(?!\$)([^\s'\"]{6,})"
        ),
        ("--pass", "--client-secret", "--api-key", "--apikey"),
        group=1,
    ),
    Rule(  # mysql -pPASSWORD (no space: a space means "ask for it")
        "mysql-password",
        re.compile(r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]*?\s-p(?!\$)([^\s'\"]{4,})"),
        ("mysql", "mariadb"),
        group=1,
    ),
    Rule(  # a Docker or npm config's "auth": base64 of user:password
        "config-auth",
        re.compile(r'"auth"\s*:\s*"([A-Za-z0-9+/]{12,}={0,2})"'),
        ('"auth"',),
        at=0,
        group=1,
    ),
]


# ---------------------------------------------------------------- assignments
# Words that make a name secret: detect-secrets' keyword list, widened to
# hyphens (``x-api-key``) and to tokens and credentials.
def _secret_name() -> re.Pattern[str]:
    """A name holding one of the words (any case), or an upper-case name holding KEY."""
    from detect_secrets.plugins.keyword import DENYLIST  # with the first redaction

    words = sorted(
        {w.replace("_?", "[_-]?") for w in DENYLIST}
        | {"token", "credentials?", "access[_-]?key", "secret[_-]?key", "passphrase"},
        key=len,
        reverse=True,
    )
    return re.compile(rf"(?i:{'|'.join(words)})|(?-i:^[A-Z0-9_.\-]*KEY[A-Z0-9_.\-]*$)")


_NAME_RUN = re.compile(r"[A-Za-z0-9_.\-]*")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_HINTS = ("key", "pass", "pwd", "secret", "token", "credential", "contrase")
_NOT_REDACTED = r"(?!\[REDACTED\])"


def _quoted(tag: str) -> str:
    """A quoted value: whatever the quotes hold (at least 4 characters)."""
    return rf"(?P<q{tag}>[\"'`]){_NOT_REDACTED}(?P<v{tag}>[^\"'`\n\\]{{4,}}?)(?P=q{tag})"


# after a colon, snake_case letters ending in their own colon and a space are a label,
# not a value: an error code before its message (``credentials: invalid_request_error:
# Incorrect API key``, ``credentials: authentication_error: invalid x-api-key``)
_LABEL = r"(?![A-Za-z]+(?:_[A-Za-z]+)+:\s)"


def _bare(tag: str, *, dots: bool) -> str:
    """An unquoted value right after = or : (env, shell, YAML): a token, not code.
    After a colon it holds no dot (``auth: process.env.X`` is code), is not a
    capitalised type name (``token: String``) and is not a label (``_LABEL``)."""
    chars = r"[^\s\"'`#,;(){}\[\]<>]" if dots else r"[^\s\"'`#,;(){}\[\]<>.]"
    not_code = "" if dots else rf"(?![A-Z][a-z]+(?:[A-Z][a-z]+)*(?![\w.])){_LABEL}"
    return rf"{_NOT_REDACTED}{not_code}(?P<v{tag}>{chars}{{6,}})(?![\w.(\[])"


# an unquoted value after a spaced = (INI, credentials files): only when it looks like a key
_KEYLIKE = (
    rf"{_NOT_REDACTED}(?P<vk>(?=[^\s]*\d)(?=[^\s]*[A-Za-z])[A-Za-z0-9/+=_\-.]{{12,}})"
    r"(?![\w.(\[])"
)
# what follows a secret name: an optional closing quote, the operator, the value
_ASSIGNMENT = re.compile(
    r"[\"']?[ \t]*"
    rf"(?:(?:=|:=|=>)[ \t]*(?:{_quoted('a')}|{_KEYLIKE})"  # spaced or not, quoted or key-like
    rf"|=(?:{_bare('b', dots=True)})"  # NAME=value (env, shell)
    rf"|:[ \t]*(?:{_quoted('c')}|{_bare('d', dots=False)}))"  # JSON, YAML
)
_VALUE_GROUPS = ("va", "vk", "vb", "vc", "vd")


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


@dataclass(frozen=True)
class Engine:
    rules: tuple[Rule, ...]
    _anchors: _Searcher = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        plain = {a for rule in self.rules if not rule.lower for a in rule.anchors}
        folded = {a for rule in self.rules if rule.lower for a in rule.anchors}
        object.__setattr__(self, "_anchors", _Searcher(plain | {_PEM_ANCHOR}, folded | set(_HINTS)))

    def redact(
        self, text: str, secrets: Iterable[str] = (), *, assignments: bool = True
    ) -> Redaction:
        spans = _value_spans(text, secrets)
        lowered = text.lower()
        if len(lowered) != len(text):  # a few non-ASCII letters lower to two characters
            lowered = text.translate(_ASCII_LOWER)
        found = self._anchors.scan(text, lowered)
        if not found.seen and not spans:  # most text holds no anchor: no rule can match
            return Redaction(text, 0)
        if found.positions((_PEM_ANCHOR,), lowered=False):
            spans.extend(m.span() for m in _PRIVATE_KEY.finditer(text))
        for rule in self.rules:
            positions = found.positions(rule.anchors, lowered=rule.lower)
            if not positions:
                continue
            if rule.at is None:
                for start, end in found.lines(rule.anchors, positions):
                    for match in rule.pattern.finditer(text, start, end):
                        spans.append(_span(match, rule.group))
            else:
                for position in positions:
                    hit = rule.pattern.match(text, max(0, position - rule.at))
                    if hit is not None:
                        spans.append(_span(hit, rule.group))
        if assignments:
            spans.extend(_assignment_spans(text, found.positions(_HINTS, lowered=True)))
        return _apply(text, spans)


class _Searcher:
    """Every anchor of every rule found in one pass per text (Aho-Corasick, from
    ``ahocorasick_rs``) instead of one substring scan per anchor: the case-sensitive
    anchors in the text, the folded ones in its lowered form."""

    def __init__(self, plain: set[str], folded: set[str]) -> None:
        self.plain, self.folded = sorted(plain), sorted(folded)
        self.plain_str, self.folded_str = AhoCorasick(self.plain), AhoCorasick(self.folded)
        self.plain_bytes = BytesAhoCorasick([a.encode() for a in self.plain])
        self.folded_bytes = BytesAhoCorasick([a.encode() for a in self.folded])

    def scan(self, text: str, lowered: str) -> _Anchors:
        seen: dict[tuple[str, bool], list[int]] = {}
        for names, is_folded, haystack, in_str, in_bytes in (
            (self.plain, False, text, self.plain_str, self.plain_bytes),
            (self.folded, True, lowered, self.folded_str, self.folded_bytes),
        ):
            hits = (  # ASCII: byte offsets are character offsets, and bytes are faster
                in_bytes.find_matches_as_indexes(haystack.encode(), overlapping=True)
                if haystack.isascii()
                else in_str.find_matches_as_indexes(haystack, overlapping=True)
            )
            for index, start, _end in hits:
                seen.setdefault((names[index], is_folded), []).append(start)
        return _Anchors(text, seen)


class _Anchors:
    """Where each anchor occurs in one text (rules share them)."""

    def __init__(self, text: str, seen: dict[tuple[str, bool], list[int]]) -> None:
        self.text = text
        self.seen = seen
        self.seen_lines: dict[tuple[str, ...], list[tuple[int, int]]] = {}

    def lines(self, anchors: tuple[str, ...], positions: list[int]) -> list[tuple[int, int]]:
        found = self.seen_lines.get(anchors)
        if found is None:
            found = self.seen_lines[anchors] = _lines_of(self.text, positions)
        return found

    def positions(self, anchors: tuple[str, ...], *, lowered: bool) -> list[int]:
        out: list[int] = []
        for anchor in anchors:
            out.extend(self.seen.get((anchor, lowered), ()))
        return out


def _lines_of(text: str, positions: list[int]) -> list[tuple[int, int]]:
    """The (start, end) of every line holding one of ``positions``, each once, in order."""
    lines: dict[int, int] = {}
    for position in positions:
        start = text.rfind("\n", 0, position) + 1
        if start not in lines:
            end = text.find("\n", position)
            lines[start] = len(text) if end < 0 else end
    return sorted(lines.items())


def _value_spans(text: str, secrets: Iterable[str]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for secret in secrets:
        if len(secret) < MIN_SECRET_CHARS:
            continue
        start = text.find(secret)
        while start >= 0:
            spans.append((start, start + len(secret)))
            start = text.find(secret, start + len(secret))
    return spans


def _span(match: re.Match[str], group: int | None) -> tuple[int, int]:
    if group is not None and len(match.group(group) or "") >= 8:  # the value, not a prefix
        return match.span(group)
    start, end = match.span()
    value = match.group(0)
    lead = len(value) - len(value.lstrip(" \t\n\"'=:"))
    trail = len(value) - len(value.rstrip(" \t\n\"'"))
    return start + lead, max(start + lead, end - trail)


def _assignment_spans(text: str, hints: list[int]) -> list[tuple[int, int]]:
    """Values assigned to secret names. Found from each occurrence of a hint word:
    the name around it is taken whole (so ``N:`` or ``path:N:`` before it does not
    matter), checked against the word list, and what follows is matched."""
    spans: list[tuple[int, int]] = []
    names_done: set[int] = set()
    for position in sorted(hints):
        end = _NAME_RUN.match(text, position).end()  # type: ignore[union-attr]
        if end in names_done:
            continue
        names_done.add(end)
        match = _ASSIGNMENT.match(text, end)  # most words are not followed by a value
        if match is None:
            continue
        start = position
        while start > 0 and text[start - 1] in _NAME_CHARS:
            start -= 1
        if _compiled().secret_name.search(text, start, end) is None:
            continue
        for group in _VALUE_GROUPS:
            if match.group(group) is not None:
                spans.append(match.span(group))
    return spans


def _apply(text: str, spans: list[tuple[int, int]]) -> Redaction:
    if not spans:
        return Redaction(text, 0)
    spans.sort()
    merged: list[list[int]] = []
    for start, end in spans:
        if end <= start:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out: list[str] = []
    last = 0
    for start, end in merged:
        out.append(text[last:start])
        # keep the line count: each covered line becomes one marker
        out.append("\n".join([REDACTED] * (text.count("\n", start, end) + 1)))
        last = end
    out.append(text[last:])
    return Redaction("".join(out), len(merged))


@dataclass(frozen=True)
class _Compiled:
    engine: Engine
    secret_name: re.Pattern[str]


_lock = threading.Lock()
_built: list[_Compiled] = []


def _compiled() -> _Compiled:
    """The rules, compiled once per process at its first redaction (a process that never
    redacts, such as the view process, never imports detect-secrets)."""
    if not _built:
        with _lock:
            if not _built:
                engine = Engine(tuple(_marker_rules() + _HAND_RULES + _library_rules()))
                _built.append(_Compiled(engine, _secret_name()))
    return _built[0]


def redact(text: str, secrets: Iterable[str] = (), *, assignments: bool = True) -> Redaction:
    """``text`` with every secret replaced by ``[REDACTED]``; ``secrets`` are exact
    values (the daemon's configured keys) removed whatever their shape."""
    return _compiled().engine.redact(text, secrets, assignments=assignments)
