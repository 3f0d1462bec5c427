"""SigV4 signing: AWS's published test-suite vectors, session tokens, Bedrock
credentials from the environment, and a signed Bedrock request end to end.

The vectors come from the AWS Signature Version 4 test suite
(docs.aws.amazon.com/general/latest/gr/signature-v4-test-suite.html):
credentials AKIDEXAMPLE / wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, region
us-east-1, service ``service``, time 20150830T123600Z.  Each expected
signature is copied from the suite's ``.authz``/``.sreq`` file, and each
expected canonical request from its ``.creq`` file.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from datetime import UTC, datetime, timedelta, timezone

import pytest

from elelem import Client
from elelem.errors import ConfigError, PermissionDeniedError, StreamError
from elelem.providers.catalog import Catalog
from elelem.testing.servers import LoopbackServer, RecordedRequest, status
from elelem.transport.endpoint import REDACTED
from elelem.transport.sigv4 import (
    EMPTY_SHA256,
    SigV4Signer,
    canonical_query,
    canonical_request,
    canonical_uri,
)
from elelem.vocabulary import TextBlock

ACCESS = "AKIDEXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
WHEN = datetime(2015, 8, 30, 12, 36, tzinfo=UTC)
HOST = {"Host": "example.amazonaws.com"}
SCOPE = "AKIDEXAMPLE/20150830/us-east-1/service/aws4_request"
STS_TOKEN = (
    "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAe"
    "MicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZ"
    "ampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xV"
    "qr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2I"
    "CCR/oLxBA=="
)


def suite_signer(token: str | None = None) -> SigV4Signer:
    return SigV4Signer(ACCESS, SECRET, token, region="us-east-1", service="service")


@pytest.mark.parametrize(
    ("name", "method", "path", "signature"),
    [
        (
            "get-vanilla",
            "GET",
            "/",
            "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
        ),
        (
            "post-vanilla",
            "POST",
            "/",
            "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b",
        ),
        (
            "normalize-path/get-space",
            "GET",
            "/example space/",
            "652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741",
        ),
    ],
)
def test_published_test_suite_vectors(name: str, method: str, path: str, signature: str) -> None:
    added = suite_signer().sign(method, path, "", HOST, b"", WHEN)
    assert added == {
        "x-amz-date": "20150830T123600Z",
        "authorization": f"AWS4-HMAC-SHA256 Credential={SCOPE}, "
        f"SignedHeaders=host;x-amz-date, Signature={signature}",
    }, name


def test_post_sts_header_before_signs_the_session_token() -> None:
    added = suite_signer(STS_TOKEN).sign("POST", "/", "", HOST, b"", WHEN)
    assert added == {
        "x-amz-date": "20150830T123600Z",
        "x-amz-security-token": STS_TOKEN,
        "authorization": f"AWS4-HMAC-SHA256 Credential={SCOPE}, "
        "SignedHeaders=host;x-amz-date;x-amz-security-token, "
        "Signature=85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead",
    }


def test_published_canonical_requests() -> None:
    headers = {"host": "example.amazonaws.com", "x-amz-date": "20150830T123600Z"}
    signed = ("host", "x-amz-date")
    # get-utf8.creq: the path "/ሴ" as UTF-8 bytes, percent-encoded.
    assert canonical_request("GET", "/\u1234", "", headers, signed, EMPTY_SHA256) == (
        "GET\n/%E1%88%B4\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
        "host;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )
    # post-vanilla-empty-query-value.creq
    assert canonical_request("POST", "/", "Param1=value1", headers, signed, EMPTY_SHA256) == (
        "POST\n/\nParam1=value1\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
        "host;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )


def test_canonical_uri_encodes_the_wire_path_again_and_query_sorts() -> None:
    # Non-S3 services: each segment encoded twice; the wire path holds the first.
    assert canonical_uri("/model/anthropic.claude-v1%3A0/converse") == (
        "/model/anthropic.claude-v1%253A0/converse"
    )
    assert canonical_uri("") == "/"
    assert canonical_query("b=2&a=x%20y&a=1&c") == "a=1&a=x%20y&b=2&c="


def test_the_signing_time_is_normalised_to_utc_and_must_be_aware() -> None:
    plus_two = WHEN.astimezone(timezone(timedelta(hours=2)))
    assert suite_signer().sign("GET", "/", "", HOST, b"", plus_two) == suite_signer().sign(
        "GET", "/", "", HOST, b"", WHEN
    )
    with pytest.raises(ConfigError) as info:
        suite_signer().sign("GET", "/", "", HOST, b"", WHEN.replace(tzinfo=None))
    assert str(info.value) == "the signing time must be timezone-aware, not 2015-08-30T12:36:00"


def test_sign_payload_adds_and_signs_the_content_hash() -> None:
    signer = SigV4Signer(ACCESS, SECRET, region="us-east-1", service="s3", sign_payload=True)
    added = signer.sign("PUT", "/k", "", HOST, b"abc", WHEN)
    digest = hashlib.sha256(b"abc").hexdigest()
    assert added["x-amz-content-sha256"] == digest
    assert "SignedHeaders=host;x-amz-content-sha256;x-amz-date," in added["authorization"]


def test_the_secret_and_token_stay_out_of_reprs() -> None:
    signer = suite_signer(STS_TOKEN)
    assert repr(signer) == (
        "SigV4Signer(access_key_id='AKIDEXAMPLE', secret_access_key='[redacted]', "
        "session_token='[redacted]', region='us-east-1', service='service')"
    )
    assert signer.secrets() == (SECRET, STS_TOKEN)
    with pytest.raises(ConfigError):
        SigV4Signer(ACCESS, "", region="us-east-1", service="service")


# -- Bedrock credentials from the environment ----------------------------------

BEDROCK_ENV = {"AWS_ACCESS_KEY_ID": ACCESS, "AWS_SECRET_ACCESS_KEY": SECRET}


def test_bedrock_prefers_the_api_key_then_falls_back_to_sigv4() -> None:
    spec = Catalog().get("bedrock")
    keyed = spec.endpoint({**BEDROCK_ENV, "AWS_BEARER_TOKEN_BEDROCK": "bedrock-key-1"})
    assert (keyed.api_key, keyed.signer) == ("bedrock-key-1", None)
    signed = spec.endpoint({**BEDROCK_ENV, "AWS_REGION": "eu-west-1"})
    assert signed.api_key is None
    assert isinstance(signed.signer, SigV4Signer)
    assert (signed.signer.region, signed.signer.service, signed.signer.session_token) == (
        "eu-west-1",
        "bedrock",
        None,
    )
    assert signed.request_headers({}) == {}
    assert SECRET not in repr(signed)
    assert signed.redact(f"echo {SECRET}!") == f"echo {REDACTED}!"
    with_token = spec.endpoint({**BEDROCK_ENV, "AWS_SESSION_TOKEN": "tok-123456"})
    assert with_token.signer is not None and with_token.signer.session_token == "tok-123456"
    assert with_token.redact_bytes(b"tok-123456 " + SECRET.encode()) == (
        f"{REDACTED} {REDACTED}".encode()
    )


def test_bedrock_without_credentials_names_both_options() -> None:
    spec = Catalog().get("bedrock")
    with pytest.raises(ConfigError) as info:
        spec.endpoint({})
    assert str(info.value) == (
        "provider bedrock needs an API key: run 'elelem keys set bedrock' or set AWS_BEARER_TOKEN_BEDROCK, or "
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (optionally AWS_SESSION_TOKEN)"
    )
    with pytest.raises(ConfigError) as info:
        spec.endpoint({"AWS_ACCESS_KEY_ID": ACCESS})
    assert str(info.value) == (
        "provider bedrock: AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"
    )
    with pytest.raises(ConfigError) as info:
        spec.endpoint({"AWS_SECRET_ACCESS_KEY": SECRET})
    assert str(info.value) == (
        "provider bedrock: AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not"
    )
    # Providers without SigV4 ignore AWS variables entirely.
    with pytest.raises(ConfigError) as info:
        Catalog().get("openai").endpoint(BEDROCK_ENV)
    assert (
        str(info.value)
        == "provider openai needs an API key: run 'elelem keys set openai' or set OPENAI_API_KEY"
    )


# -- end to end ----------------------------------------------------------------

MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"
BODY = {
    "output": {"message": {"role": "assistant", "content": [{"text": "Hi"}]}},
    "stopReason": "end_turn",
    "usage": {"inputTokens": 3, "outputTokens": 1, "totalTokens": 4},
}
TOKEN = "session-token-loopback-7"


def reference_signature(canonical: str, region: str) -> str:
    """The signature over ``canonical`` by the documented HMAC chain, written
    out here independently of the signer."""
    digest = hashlib.sha256(canonical.encode()).hexdigest()
    to_sign = (
        f"AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/{region}/bedrock/aws4_request\n{digest}"
    )
    key = ("AWS4" + SECRET).encode()
    for part in ("20150830", region, "bedrock", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


def signed_complete(reply_body: bytes, reply_status: int = 200) -> tuple[object, RecordedRequest]:
    env = {
        **BEDROCK_ENV,
        "AWS_SESSION_TOKEN": TOKEN,
        "AWS_REGION": "us-west-2",
        "ELELEM_BEDROCK_BASE_URL": "",
        "ELELEM_CONFIG": "/nonexistent/elelem.toml",
    }

    async def main() -> object:
        async with Client(env=env, clock=lambda: WHEN) as client:
            try:
                return await client.complete(f"bedrock:{MODEL}", "q")
            except StreamError as exc:
                return exc

    with LoopbackServer([status(reply_status, reply_body)]) as server:
        env["ELELEM_BEDROCK_BASE_URL"] = server.url
        result = asyncio.run(main())
    (request,) = server.requests
    return result, request


def test_a_bedrock_request_is_signed_at_send_with_the_clocks_time() -> None:
    result, request = signed_complete(json.dumps(BODY).encode())
    assert getattr(result, "blocks", None) == (TextBlock(text="Hi"),)
    assert request.path == "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse"
    host = request.headers["host"]
    canonical = (
        "POST\n/model/anthropic.claude-3-5-sonnet-20240620-v1%253A0/converse\n\n"
        f"host:{host}\nx-amz-date:20150830T123600Z\nx-amz-security-token:{TOKEN}\n\n"
        "host;x-amz-date;x-amz-security-token\n" + hashlib.sha256(request.body).hexdigest()
    )
    assert request.headers["authorization"] == (
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-west-2/bedrock/aws4_request, "
        "SignedHeaders=host;x-amz-date;x-amz-security-token, "
        f"Signature={reference_signature(canonical, 'us-west-2')}"
    )
    assert (request.headers["x-amz-date"], request.headers["x-amz-security-token"]) == (
        "20150830T123600Z",
        TOKEN,
    )
    # The secret is used only inside the signature: never sent.
    raw = json.dumps(dict(request.headers)).encode() + request.path.encode() + request.body
    assert SECRET.encode() not in raw


def test_an_auth_error_body_echoing_the_secret_is_redacted() -> None:
    body = json.dumps({"message": f"bad signature for {SECRET} and {TOKEN}"}).encode()
    error, _ = signed_complete(body, reply_status=403)
    assert isinstance(error, PermissionDeniedError)
    assert SECRET not in str(error) and TOKEN not in str(error)
    assert error.body is not None and SECRET.encode() not in error.body
    assert str(error) == f"bedrock 403 error: bad signature for {REDACTED} and {REDACTED}"
