"""One wording for a failed certificate check (tui.tlserror): OpenSSL's reason found in an exception chain or in
the text a library wrapped it in, told apart (not trusted / expired / not yet valid / another name) with the
fix for each; a CA bundle OpenSSL cannot load is named as such."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from tui.tlserror import ca_file_problem, describe_verify, verify_reason

KEYSTONEAUTH = ("SSL exception connecting to https://127.0.0.1:13500/v3/auth/tokens: HTTPSConnectionPool(host="
                "'127.0.0.1', port=13500): Max retries exceeded with url: /v3/auth/tokens (Caused by SSLError("
                "SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to "
                "get local issuer certificate (_ssl.c:1006)')))")
HTTPX = "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: certificate has expired (_ssl.c:1006)"
MISMATCH = ("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: IP address mismatch, certificate is not "
            "valid for '127.0.0.2'. (_ssl.c:1006)")


def verification_error(message: str) -> ssl.SSLCertVerificationError:
    err = ssl.SSLCertVerificationError(1, f"[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: {message}")
    err.verify_message = message
    return err


@pytest.mark.parametrize(("text", "reason"), [
    (KEYSTONEAUTH, "unable to get local issuer certificate"),
    (HTTPX, "certificate has expired"),
    (MISMATCH, "IP address mismatch, certificate is not valid for '127.0.0.2'"),
    ("SSL exception connecting to https://nova:8774: certificate verify failed", ""),
    ("connection refused", None),
])
def test_reason_from_the_text_a_library_wrapped_it_in(text: str, reason: str | None) -> None:
    assert verify_reason(text) == reason
    assert verify_reason(RuntimeError(text)) == reason


def test_reason_from_the_exception_chain() -> None:
    try:
        try:
            raise verification_error("self-signed certificate in certificate chain")
        except ssl.SSLError as inner:
            raise OSError("(2003, \"Can't connect\")") from inner
    except OSError as outer:
        assert verify_reason(outer) == "self-signed certificate in certificate chain"


@pytest.mark.parametrize(("reason", "problem", "fix"), [
    ("unable to get local issuer certificate", "TLS certificate not trusted", "set [x] cacert"),
    ("self-signed certificate", "TLS certificate not trusted", "set [x] cacert"),
    ("certificate has expired", "TLS certificate expired", "renewed certificate"),
    ("certificate is not yet valid", "TLS certificate not yet valid", "clock"),
    ("IP address mismatch, certificate is not valid for '127.0.0.2'", "TLS certificate is for another name",
     "[x] url"),
    ("", "TLS certificate not trusted", "set [x] cacert"),
])
def test_each_reason_gets_its_problem_and_fix(reason: str, problem: str, fix: str) -> None:
    line = describe_verify(reason, "set [x] cacert to the CA that signed it", "[x] url")
    assert line.startswith(problem) and fix in line and "\n" not in line, line
    assert f"certificate verify failed: {reason}" in line if reason else "(certificate verify failed)" in line
    if problem != "TLS certificate not trusted":
        assert "cacert" not in line  # another CA would not help


def test_ca_file_problem(tmp_path: Path) -> None:
    assert ca_file_problem(str(tmp_path / "missing.pem")) == "does not exist"
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    problem = ca_file_problem(str(junk))
    assert problem is not None and problem.startswith("holds no CA certificate OpenSSL can load"), problem
    assert ca_file_problem(ssl.get_default_verify_paths().openssl_cafile or "/etc/ssl/certs/ca-certificates.crt") \
        is None
