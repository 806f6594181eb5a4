"""Secret redaction for anything telemetry writes that came from a user (prompts, reasoning).

What is replaced (by ``[REDACTED:<kind>]``), in this order:

1. the configured classifier key (`ResolverConfig.api_key()`), wherever it appears, verbatim;
2. PEM private keys (``-----BEGIN ... PRIVATE KEY-----`` to the matching END, or to the end of
   the text when the END line is missing);
3. ``Authorization:``/``Proxy-Authorization:`` header values (Bearer, Basic, Token, ...) and any
   ``Bearer <token>``;
4. passwords in URLs: ``scheme://user:password@host`` keeps the user, drops the password;
5. Anthropic keys (``sk-ant-...``) and OpenAI-style keys (``sk-...``, ``sk-proj-...``, 16+ chars);
6. AWS access key ids (``AKIA...``/``ASIA...`` + 16);
7. GitHub tokens (``ghp_``, ``gho_``, ``ghu_``, ``ghs_``, ``ghr_``, ``github_pat_``);
8. Slack tokens (``xoxb-``, ``xoxp-``, ``xoxa-``, ``xoxr-``, ``xoxs-``, ``xoxo-``);
9. JSON Web Tokens (``eyJ<header>.eyJ<payload>.<signature>``);
10. assignments whose name ends in a secret word: ``api_key=...``, ``"token": "..."``,
    ``password: ...``, ``client_secret=...``, ``AWS_SECRET_ACCESS_KEY=...``, ``pwd=...``, ...
    (the name is kept, the value replaced; ``max_tokens=400`` is not touched);
11. payment card numbers: 13-19 digits, optionally grouped by spaces or dashes, that pass the
    Luhn check (``4111 1111 1111 1111``; a phone number or an order id that fails it stays).

`without_secret_like` goes further for prompt text (the keyword cache's terms, telemetry's
prompt excerpt, the classifier request): it also removes every word that looks like a
credential of unknown shape (`secret_like`: long, mixing letters and digits, or long and
high-entropy), so a bare AWS secret key or a pasted token of no known format is not kept. A
git hash or a UUID in a prompt is removed from those too; ids in their own fields (a session
id) are only redacted when they match a known secret shape.

Each family is tried only when the text contains a substring all its matches contain (cheap
pre-checks); redaction runs on the telemetry writer's thread, never on the hook path.

Redaction runs on the whole text before it is cut to ``promptExcerptLength``, so a cut never
leaves half a secret behind. It is a safety net, not a guarantee for secrets of unknown shape:
set ``capturePrompts: false`` to keep prompt text out of telemetry altogether.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

_PEM = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
    r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.DOTALL,
)
_AUTH_HEADER = re.compile(
    r"(?i)\b((?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?)"
    r"(?:(bearer|basic|token|digest|negotiate|apikey)\s+)?[^\s\"',;]+"
)
_BEARER = re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9\-._~+/]{8,}=*")
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]{1,20}://[^\s/:@\"'<>]+):[^\s/@\"'<>]+@")
_PATTERNS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    # (kind, a substring every match contains - a cheap pre-check, the pattern)
    ("anthropic_key", "sk-ant-", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{8,}")),
    ("openai_key", "sk-", re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}")),
    (
        "aws_access_key",
        "A",
        re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16}\b"),
    ),
    (
        "github_token",
        "_",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    ),
    ("slack_token", "xox", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{8,}")),
    ("jwt", "eyJ", re.compile(r"\beyJ[A-Za-z0-9_\-]{4,}\.eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*")),
)
_SECRET_NAME = (
    r"(?:api[_\-]?key|apikey|secret(?:[_\-]?key)?|access[_\-]?key(?:[_\-]?id)?|private[_\-]?key"
    r"|token|passw(?:or)?d|passwd|pwd|credentials?|session[_\-]?key)"
)
_ASSIGNMENT = re.compile(
    r"(?i)(" + _SECRET_NAME + r")([\"']?\s*[:=]\s*[\"']?)(?!\[REDACTED)([^\s\"'&,;<>]+)"
)
_CARD = re.compile(r"(?<![\w-])\d(?:[ -]?\d){12,18}(?![\w-])")
"""A payment card number: 13-19 digits, spaces or dashes between them, standing alone. Not
digits inside a longer word: a UUID ("c2822570-7527-4357-9e4d-...", an OpenClaw session id)
holds a run of 16 digits and dashes that passes the Luhn check about one time in ten."""
_RUN = re.compile(r"[A-Za-z0-9+/=_\-]{16,}")


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every secret this module knows (and each of `secrets`) replaced."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[REDACTED:configured_key]")
    lower = text.lower()
    if "private key" in lower:
        text = _PEM.sub("[REDACTED:private_key]", text)
    if "authorization" in lower:
        text = _AUTH_HEADER.sub(_auth_replacement, text)
    if "bearer" in lower:
        text = _BEARER.sub(r"\1 [REDACTED:bearer]", text)
    if "://" in text:
        text = _URL_PASSWORD.sub(r"\1:[REDACTED:password]@", text)
    for kind, marker, pattern in _PATTERNS:
        if marker in text:
            text = pattern.sub(f"[REDACTED:{kind}]", text)
    if "=" in text or ":" in text:
        text = _ASSIGNMENT.sub(r"\1\2[REDACTED:secret]", text)
    if sum(map(str.isdigit, text[:100_000])) >= 13:
        text = _CARD.sub(_card_replacement, text)
    return text


def luhn_ok(digits: str) -> bool:
    """True when the digit string passes the Luhn checksum (payment card numbers do)."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _card_replacement(match: re.Match[str]) -> str:
    digits = "".join(ch for ch in match.group(0) if ch.isdigit())
    if 13 <= len(digits) <= 19 and luhn_ok(digits):
        return "[REDACTED:card_number]"
    return match.group(0)


def _entropy(word: str) -> float:
    counts: dict[str, int] = {}
    for ch in word:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(word)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def secret_like(word: str) -> bool:
    """A word (a run of letters, digits and ``+/=_-``) that looks like a credential of unknown
    shape: 16+ characters mixing letters and digits with both cases, or 20+ mixing letters and
    digits (hex digests, ids with a secret part), or 24+ with high character entropy."""
    if len(word) < 16:
        return False
    letters = any(ch.isalpha() for ch in word)
    digits = any(ch.isdigit() for ch in word)
    mixed_case = any(ch.isupper() for ch in word) and any(ch.islower() for ch in word)
    if letters and digits and (mixed_case or len(word) >= 20):
        return True
    return len(word) >= 24 and mixed_case and _entropy(word) >= 4.0


def without_secret_like(text: str, secrets: Iterable[str] = (), *, marker: str = " ") -> str:
    """`redact` (the configured key included), then every `secret_like` word replaced by
    `marker` (the keyword cache drops them; telemetry excerpts and the classifier prompt show
    `HIGH_ENTROPY`)."""
    return _RUN.sub(
        lambda m: marker if secret_like(m.group(0)) else m.group(0), redact(text, secrets)
    )


HIGH_ENTROPY = "[REDACTED:high_entropy]"


def _auth_replacement(match: re.Match[str]) -> str:
    scheme = f"{match.group(2)} " if match.group(2) else ""
    return f"{match.group(1)}{scheme}[REDACTED:authorization]"


def excerpt(text: str, limit: int, secrets: Iterable[str] = ()) -> str:
    """The redacted text cut to at most `limit` characters."""
    return redact(text, secrets)[: max(0, limit)]


def prompt_hash(redacted: str) -> str:
    """``sha256:<hex>`` of the (already redacted) prompt: groups identical prompts."""
    return "sha256:" + hashlib.sha256(redacted.encode("utf-8", "surrogatepass")).hexdigest()


def safe_url(url: str) -> str:
    """`url` as it may be printed or logged: without ``user:password@`` and without a query
    string (some gateways take a key there, e.g. ``?api-key=...``)."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return _URL_PASSWORD.sub(r"\1:[REDACTED:password]@", url).split("?", 1)[0]
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
