"""Redaction: secrets of every documented kind never survive into telemetry text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resolver._redact import excerpt
from resolver.telemetry import redact

PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
    "-----END RSA PRIVATE KEY-----"
)

SECRETS = [
    pytest.param(
        "key sk-" + "proj-4f8a9b2c1d3e5f6a7b8c9d0e1f2a3b4c", "sk-proj-4f8a9b2c1d3e", id="openai"
    ),
    pytest.param(
        "use sk-" + "ant-api03-AbCdEfGhIjKlMnOpQrStUv-xyz", "sk-ant-api03-AbCdEf", id="anthropic"
    ),
    pytest.param("api_key=abc123secretvalue", "abc123secretvalue", id="api_key="),
    pytest.param('{"token": "tok_9f8e7d6c5b4a"}', "tok_9f8e7d6c5b4a", id="json-token"),
    pytest.param("OPENAI_API_KEY=whatever-it-is-42", "whatever-it-is-42", id="env-assignment"),
    pytest.param("password: hunter2hunter2", "hunter2hunter2", id="password:"),
    pytest.param("client_secret=Zm9vYmFyYmF6", "Zm9vYmFyYmF6", id="client_secret"),
    pytest.param(
        "curl -H 'Authorization: Bearer abc.def-ghi_jkl~123456'", "abc.def-ghi_jkl", id="bearer"
    ),
    pytest.param("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA", id="basic"),
    pytest.param(
        "token is Bearer " + "eyJhbGciOiJIUzI1NiJ9xyz0123", "eyJhbGciOiJIUzI1NiJ9", id="bare-bearer"
    ),
    pytest.param(
        "db at postgres://admin:S3cr3tPw@db.internal:5432/app", "S3cr3tPw", id="url-password"
    ),
    pytest.param("clone https://user:ghp_pass@github.com/x.git", "ghp_pass", id="url-password-2"),
    pytest.param(
        f"here is my key\n{PEM}\nthanks", "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgO", id="pem"
    ),
    pytest.param(
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU",
        id="pem-cut-off",
    ),
    pytest.param("aws AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE", id="aws-access-key"),
    pytest.param(
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG",
        id="aws-secret",
    ),
    pytest.param(
        "gh token ghp_1234567890abcdefghijABCDEFGHIJ123456", "ghp_1234567890abcdef", id="github"
    ),
    pytest.param(
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "github_pat_11ABCDEFG",
        id="gh-pat",
    ),
    pytest.param("slack xoxb-1234567890-0987654321-AbCdEfGh", "xoxb-1234567890", id="slack"),
    pytest.param("card 4111 1111 1111 1111, exp 12/29", "4111 1111 1111 1111", id="card"),
    pytest.param("card:4111-1111-1111-1111", "4111-1111-1111-1111", id="card-dashes"),
    pytest.param(
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
        id="jwt",
    ),
]


@pytest.mark.parametrize(("text", "secret"), SECRETS)
def test_each_documented_kind_is_redacted(text: str, secret: str) -> None:
    """Every secret shape in the documented list is replaced by a [REDACTED:...] marker."""
    out = redact(text)
    assert secret not in out
    assert "[REDACTED:" in out


@pytest.mark.parametrize(
    "text",
    [
        "set max_tokens=400 and temperature=0",
        "how many tokens does this use?",
        "open https://example.com/a/b?q=1 please",
        "my skills: sketching, skiing",
        "ssh user@host and mail bob@example.com",
        # a UUID whose digit run passes the Luhn check is no card number (a session id)
        "session c2822570-7527-4357-9e4d-75e1ab5cbf75",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    """Text without secrets passes through unchanged."""
    assert redact(text) == text


@given(
    before=st.text(max_size=80),
    after=st.text(max_size=80),
    key=st.text(
        alphabet=st.characters(whitelist_categories=("Lu", "Ll", "Nd"), whitelist_characters="-_."),
        min_size=8,
        max_size=60,
    ),
)
def test_configured_key_never_survives(before: str, after: str, key: str) -> None:
    """Whatever surrounds it and whatever it looks like, the configured key is removed."""
    assert key not in redact(before + key + after, [key])


KEY = "sk-" + "proj-4f8a9b2c1d3e5f6a7b8c9d0e1f2a3b4c"


@given(text=st.text(max_size=400), limit=st.integers(min_value=0, max_value=300))
def test_excerpt_is_redacted_before_it_is_cut(text: str, limit: int) -> None:
    """The excerpt is the redacted text cut to `limit` chars: no cut leaves part of a key."""
    out = excerpt(f"{text} {KEY}", limit)
    assert len(out) <= limit
    assert out == redact(f"{text} {KEY}")[:limit]
    assert KEY[:12] not in out
