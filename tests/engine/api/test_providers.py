"""Reviews through Amazon Bedrock, Google Vertex AI and Microsoft Foundry, end to end.

Each runs `orch-review` as a subprocess with the SDK's own client for the provider, pointed at
the fake Messages API, which answers in that provider's wire format (AWS event stream for
Bedrock, SSE under Vertex's and Foundry's paths) and checks the requests follow it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs

import pytest

from orch_review.engine.api.providers import has_credentials
from tests.conftest import GitRepoFactory
from tests.fakes.http_server import Exchange, LocalHTTPServer
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import make_planted_repo, run_cli
from tests.scripted import planted_script

pytest.importorskip("botocore", reason="the test extra installs anthropic[bedrock]")

AWS_KEY_ID = "AKIDEXAMPLE0000001"
AWS_SECRET = "aws-secret-canary-5c1e"
AWS_SESSION = "aws-session-canary-77ab"
BEDROCK_MODEL = "us.anthropic.claude-opus-4-6-v1"
VERTEX_TOKEN = "ya29.vertex-canary-91"
FOUNDRY_KEY = "foundry-key-canary-3f"
ADC_TOKEN = "ya29.from-service-account"
PROVIDER_PREFIXES = (
    *("ANTHROPIC_", "AWS_", "GOOGLE_", "CLOUDSDK_", "CLOUD_ML_", "ORCH_REVIEW_PROVIDER"),
    *("AZURE_", "IDENTITY_", "MSI_", "IMDS_"),  # Entra ID: service principal, managed identity
)

# The planted review: 3 main turns, 2 concerns and 2 verifiers of 2 turns each, and the
# one-turn sweep of README.md, which no concern covers.
REVIEW_REQUESTS = 12


@pytest.fixture
def base_env(api_env: dict[str, str]) -> dict[str, str]:
    """The test environment without any provider's settings or credentials."""
    return {k: v for k, v in api_env.items() if not k.startswith(PROVIDER_PREFIXES)}


def bedrock_env(base_env: dict[str, str], fake_api: FakeMessagesAPI) -> dict[str, str]:
    return {
        **base_env,
        "ORCH_REVIEW_PROVIDER": "bedrock",
        "ORCH_REVIEW_MODEL": BEDROCK_MODEL,
        "AWS_ACCESS_KEY_ID": AWS_KEY_ID,
        "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
        "AWS_SESSION_TOKEN": AWS_SESSION,
        "AWS_REGION": "eu-west-3",
        "ANTHROPIC_BEDROCK_BASE_URL": fake_api.base_url,
        # Without keys botocore's chain would end by asking the EC2 metadata service.
        "AWS_EC2_METADATA_DISABLED": "true",
    }


def vertex_env(base_env: dict[str, str], fake_api: FakeMessagesAPI) -> dict[str, str]:
    return {
        **base_env,
        "ORCH_REVIEW_PROVIDER": "vertex",
        "ORCH_REVIEW_MODEL": "claude-opus-4-6@20260115",
        "CLOUDSDK_AUTH_ACCESS_TOKEN": VERTEX_TOKEN,
        "CLOUD_ML_REGION": "us-east5",
        "ANTHROPIC_VERTEX_PROJECT_ID": "review-project",
        "ANTHROPIC_VERTEX_BASE_URL": f"{fake_api.base_url}/v1",
        # Without a token google-auth's search would end by asking the GCE metadata server.
        "NO_GCE_CHECK": "true",
    }


def foundry_env(base_env: dict[str, str], fake_api: FakeMessagesAPI) -> dict[str, str]:
    return {
        **base_env,
        "ORCH_REVIEW_PROVIDER": "foundry",
        "ANTHROPIC_FOUNDRY_API_KEY": FOUNDRY_KEY,
        "ANTHROPIC_FOUNDRY_BASE_URL": f"{fake_api.base_url}/anthropic/",
    }


def review(
    repo: Path, env: dict[str, str], tmp_path: Path
) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    out = tmp_path / "report.json"
    result = run_cli(repo, env, "--all", "--json", str(out))
    assert result.returncode == 1, result.stderr
    return result, json.loads(out.read_text())


def assert_planted_findings(result: subprocess.CompletedProcess[str]) -> None:
    assert "app.py:6" in result.stdout
    assert "SQL query built with an f-string" in result.stdout
    assert "1 finding refuted" in result.stdout
    assert "Traceback" not in result.stderr


def test_bedrock_review_signs_requests_and_reads_the_aws_event_stream(
    fake_api: FakeMessagesAPI, base_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    # The main agent scouts with `env`: its output goes back to the model, so a secret that
    # reached the agents' shells would show up in a later request.
    fake_api.policy = planted_script(scout="env; git ls-files")
    fake_api.expected_key = AWS_KEY_ID  # the fake checks the SigV4 credential's key id

    result, data = review(repo, bedrock_env(base_env, fake_api), tmp_path)

    assert_planted_findings(result)
    requests = fake_api.message_requests
    assert len(requests) == REVIEW_REQUESTS and {r.provider for r in requests} == {"bedrock"}
    first = requests[0]
    assert first.wire_path == f"/model/{BEDROCK_MODEL}/invoke-with-response-stream"
    sent = json.loads(first.raw)
    assert "model" not in sent and "stream" not in sent
    assert sent["anthropic_version"]
    assert sent["output_config"] == {"effort": "xhigh"}
    # Effort is generally available on Bedrock: no beta flag, in the body or as a header.
    assert "anthropic_beta" not in sent and "anthropic-beta" not in first.headers
    assert sent["system"][0]["cache_control"] == {"type": "ephemeral"}
    signature = first.headers["authorization"]
    assert signature.startswith(f"AWS4-HMAC-SHA256 Credential={AWS_KEY_ID}/")
    assert "/eu-west-3/bedrock/aws4_request" in signature
    assert first.headers["x-amz-security-token"] == AWS_SESSION
    # Bedrock's model id is priced as the Claude model it names.
    usage = data["usage"]
    assert isinstance(usage, dict) and usage["unknown_price_models"] == []
    assert usage["total"]["cost_usd"] > 0
    scouted = fake_api.requests_for("main")[1].raw.decode()
    assert "PATH=" in scouted and "app.py" in scouted
    for request in fake_api.requests:
        assert AWS_SECRET.encode() not in request.raw
        assert AWS_SESSION.encode() not in request.raw


def test_bedrock_stream_exception_frame_is_retried(
    fake_api: FakeMessagesAPI, base_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    fake_api.add_fault("error_event", error_type="rate_limit_error")  # a throttlingException
    env = {**bedrock_env(base_env, fake_api), "ORCH_REVIEW_MAX_RETRIES": "1"}

    result, _ = review(repo, env, tmp_path)

    assert_planted_findings(result)
    faulted = [r for r in fake_api.message_requests if r.fault]
    assert [r.fault for r in faulted] == ["error_event"]
    assert len(fake_api.message_requests) == REVIEW_REQUESTS + 1  # the faulted one, again


def test_bedrock_cut_off_stream_is_retried(
    fake_api: FakeMessagesAPI, base_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    fake_api.add_fault("drop_stream")
    env = {**bedrock_env(base_env, fake_api), "ORCH_REVIEW_MAX_RETRIES": "1"}

    result, _ = review(repo, env, tmp_path)

    assert_planted_findings(result)
    assert len(fake_api.message_requests) == REVIEW_REQUESTS + 1


def test_vertex_review_uses_the_project_region_and_access_token(
    fake_api: FakeMessagesAPI, base_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    fake_api.expected_key = VERTEX_TOKEN

    result, data = review(repo, vertex_env(base_env, fake_api), tmp_path)

    assert_planted_findings(result)
    requests = fake_api.message_requests
    assert len(requests) == REVIEW_REQUESTS and {r.provider for r in requests} == {"vertex"}
    first = requests[0]
    assert first.wire_path == (
        "/v1/projects/review-project/locations/us-east5/publishers/anthropic/models/"
        "claude-opus-4-6@20260115:streamRawPredict"
    )
    sent = json.loads(first.raw)
    assert "model" not in sent and sent["stream"] is True and sent["anthropic_version"]
    assert sent["output_config"] == {"effort": "xhigh"}
    assert "anthropic_beta" not in sent and "anthropic-beta" not in first.headers
    assert first.headers["authorization"] == f"Bearer {VERTEX_TOKEN}"
    usage = data["usage"]
    assert isinstance(usage, dict) and usage["unknown_price_models"] == []


def test_foundry_review_sends_the_foundry_key(
    fake_api: FakeMessagesAPI, base_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    fake_api.expected_key = FOUNDRY_KEY

    env = {**foundry_env(base_env, fake_api), "ORCH_REVIEW_EFFORT": "medium"}

    result, _ = review(repo, env, tmp_path)

    assert_planted_findings(result)
    requests = fake_api.message_requests
    assert len(requests) == REVIEW_REQUESTS and {r.provider for r in requests} == {"foundry"}
    first = requests[0]
    assert first.wire_path == "/anthropic/v1/messages"
    assert first.headers["x-api-key"] == FOUNDRY_KEY
    assert "authorization" not in first.headers
    sent = json.loads(first.raw)
    assert sent["model"] == "claude-opus-5-5"
    assert all(json.loads(r.raw)["output_config"] == {"effort": "medium"} for r in requests)
    assert "anthropic-beta" not in first.headers


def test_a_rejected_aws_signature_names_the_aws_credentials(
    fake_api: FakeMessagesAPI, base_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    fake_api.expected_key = "AKIDSOMEONEELSE"

    result = run_cli(repo, bedrock_env(base_env, fake_api), "--all")

    assert result.returncode == 2, result.stderr
    assert "check the AWS credentials" in result.stderr
    assert "Traceback" not in result.stderr


def _without(env: dict[str, str], *names: str) -> dict[str, str]:
    return {k: v for k, v in env.items() if k not in names}


@pytest.mark.parametrize(
    ("make_env", "removed", "expected"),
    [
        (
            bedrock_env,
            ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"),
            "No AWS credentials for Bedrock: set AWS_ACCESS_KEY_ID",
        ),
        (bedrock_env, ("AWS_REGION",), "Bedrock needs a region: set AWS_REGION"),
        (vertex_env, ("CLOUDSDK_AUTH_ACCESS_TOKEN",), "No Google credentials for Vertex AI"),
        (vertex_env, ("CLOUD_ML_REGION",), "Vertex AI needs a region: set CLOUD_ML_REGION"),
        (
            vertex_env,
            ("ANTHROPIC_VERTEX_PROJECT_ID",),
            "Vertex AI needs a project: set ANTHROPIC_VERTEX_PROJECT_ID",
        ),
        (foundry_env, ("ANTHROPIC_FOUNDRY_API_KEY",), "set ANTHROPIC_FOUNDRY_API_KEY"),
        (
            foundry_env,
            ("ANTHROPIC_FOUNDRY_BASE_URL",),
            "needs exactly one of ANTHROPIC_FOUNDRY_RESOURCE",
        ),
    ],
    ids=[
        "bedrock-credentials",
        "bedrock-region",
        "vertex-credentials",
        "vertex-region",
        "vertex-project",
        "foundry-key",
        "foundry-endpoint",
    ],
)
def test_what_a_provider_lacks_is_named_before_any_request(
    fake_api: FakeMessagesAPI,
    base_env: dict[str, str],
    git_repo: GitRepoFactory,
    make_env: object,
    removed: tuple[str, ...],
    expected: str,
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    env = _without(make_env(base_env, fake_api), *removed)  # type: ignore[operator]

    result = run_cli(repo, env, "--all")

    assert result.returncode == 2, result.stderr
    assert expected in result.stderr
    assert "Traceback" not in result.stderr
    assert fake_api.requests == []


def test_bedrock_needs_a_bedrock_model_id(
    fake_api: FakeMessagesAPI, base_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    env = _without(bedrock_env(base_env, fake_api), "ORCH_REVIEW_MODEL")

    result = run_cli(repo, env, "--all")

    assert result.returncode == 2
    assert "'claude-opus-5-5', which is not a Bedrock model id" in result.stderr
    assert fake_api.requests == []


def test_token_counting_through_vertex_and_refused_for_bedrock(
    fake_api: FakeMessagesAPI, base_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)

    counted = run_cli(repo, vertex_env(base_env, fake_api), "plan", "--all", "--count-tokens")
    refused = run_cli(repo, bedrock_env(base_env, fake_api), "plan", "--all", "--count-tokens")

    assert counted.returncode == 0, counted.stderr
    paths = [r.wire_path for r in fake_api.requests]
    assert paths == [
        "/v1/projects/review-project/locations/us-east5/publishers/anthropic/models/"
        "count-tokens:rawPredict"
    ]
    assert refused.returncode == 2
    assert "bedrock does not count tokens" in refused.stderr


@pytest.mark.parametrize(
    ("provider", "blocked", "extra"),
    [("bedrock", "botocore", "bedrock"), ("vertex", "google", "vertex")],
)
def test_a_missing_extra_says_what_to_install(
    fake_api: FakeMessagesAPI,
    base_env: dict[str, str],
    git_repo: GitRepoFactory,
    provider: str,
    blocked: str,
    extra: str,
) -> None:
    repo = make_planted_repo(git_repo)
    env = (
        bedrock_env(base_env, fake_api) if provider == "bedrock" else vertex_env(base_env, fake_api)
    )
    env.pop("CLOUDSDK_AUTH_ACCESS_TOKEN", None)  # Vertex needs google-auth without a token
    env["GOOGLE_APPLICATION_CREDENTIALS"] = str(repo / "README.md")
    # As if the package were not installed: None in sys.modules stops its import.
    start = f"import sys; sys.modules[{blocked!r}] = None; from orch_review.cli import main; main()"

    result = subprocess.run(
        [sys.executable, "-c", start, "--all"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )

    assert result.returncode == 2, result.stderr
    assert f"pip install 'orch-review[{extra}] @ git+" in result.stderr
    assert fake_api.requests == []


@pytest.mark.parametrize(
    ("provider", "env", "files", "expected"),
    [
        ("bedrock", {"AWS_ACCESS_KEY_ID": "id"}, (), False),
        ("bedrock", {"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "s"}, (), True),
        ("bedrock", {"AWS_PROFILE": "ci"}, (), True),
        ("bedrock", {"AWS_BEARER_TOKEN_BEDROCK": "k"}, (), True),
        ("bedrock", {"AWS_WEB_IDENTITY_TOKEN_FILE": "/var/token"}, (), True),
        ("bedrock", {}, (".aws/credentials",), True),
        ("bedrock", {}, (), False),
        ("vertex", {}, (".config/gcloud/application_default_credentials.json",), True),
        ("vertex", {"GOOGLE_APPLICATION_CREDENTIALS": "/k.json"}, (), True),
        ("vertex", {"CLOUDSDK_AUTH_ACCESS_TOKEN": "ya29"}, (), True),
        ("vertex", {"ANTHROPIC_API_KEY": "k"}, (), False),
        ("foundry", {"ANTHROPIC_FOUNDRY_API_KEY": "k"}, (), True),
        ("foundry", {"ANTHROPIC_API_KEY": "k"}, (), False),
        ("anthropic", {"ANTHROPIC_BASE_URL": "http://gateway"}, (), True),
        ("anthropic", {"AWS_PROFILE": "ci"}, (), False),
        (None, {"ANTHROPIC_FOUNDRY_API_KEY": "k"}, (), True),
        (None, {"PATH": "/bin"}, (), False),
    ],
)
def test_credentials_in_sight_per_provider(
    tmp_path: Path,
    provider: str | None,
    env: dict[str, str],
    files: tuple[str, ...],
    expected: bool,
) -> None:
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")

    assert has_credentials({**env, "HOME": str(tmp_path)}, provider) is expected


@dataclass
class TokenEndpoint:
    """Google's OAuth token endpoint, as a service account's `token_uri` reaches it."""

    refuse: bool = False
    grants: list[dict[str, list[str]]] = field(default_factory=list)

    def __call__(self, exchange: Exchange) -> None:
        self.grants.append(parse_qs(exchange.read_body().decode()))
        if self.refuse:
            error = {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}
            return exchange.send_json(400, error)
        token = {"access_token": ADC_TOKEN, "expires_in": 3600, "token_type": "Bearer"}
        exchange.send_json(200, token)


@pytest.fixture
def token_endpoint() -> Iterator[tuple[TokenEndpoint, str]]:
    endpoint = TokenEndpoint()
    server = LocalHTTPServer(endpoint, name="fake-google-token")
    server.start()
    try:
        yield endpoint, f"{server.base_url}/token"
    finally:
        server.stop()


def service_account_file(path: Path, token_uri: str) -> Path:
    """A service account key file, as `gcloud iam service-accounts keys create` writes."""
    pytest.importorskip("google.auth", reason="the test extra installs anthropic[vertex]")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    info = {
        "type": "service_account",
        "project_id": "review-project",
        "private_key_id": "key-1",
        "private_key": pem.decode(),
        "client_email": "orch-review@review-project.iam.gserviceaccount.com",
        "client_id": "1234567890",
        "token_uri": token_uri,
    }
    path.write_text(json.dumps(info))
    return path


def test_vertex_with_a_service_account_file_exchanges_it_for_a_token(
    fake_api: FakeMessagesAPI,
    base_env: dict[str, str],
    git_repo: GitRepoFactory,
    tmp_path: Path,
    token_endpoint: tuple[TokenEndpoint, str],
) -> None:
    endpoint, token_uri = token_endpoint
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    fake_api.expected_key = ADC_TOKEN
    env = _without(vertex_env(base_env, fake_api), "CLOUDSDK_AUTH_ACCESS_TOKEN")
    env["GOOGLE_APPLICATION_CREDENTIALS"] = str(
        service_account_file(tmp_path / "sa.json", token_uri)
    )

    result, _ = review(repo, env, tmp_path)

    assert_planted_findings(result)
    assert [g["grant_type"] for g in endpoint.grants] == [
        ["urn:ietf:params:oauth:grant-type:jwt-bearer"]
    ]
    requests = fake_api.message_requests
    assert len(requests) == REVIEW_REQUESTS
    assert {r.headers["authorization"] for r in requests} == {f"Bearer {ADC_TOKEN}"}


def test_vertex_credentials_google_refuses_are_reported_before_any_request(
    fake_api: FakeMessagesAPI,
    base_env: dict[str, str],
    git_repo: GitRepoFactory,
    tmp_path: Path,
    token_endpoint: tuple[TokenEndpoint, str],
) -> None:
    endpoint, token_uri = token_endpoint
    endpoint.refuse = True
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    env = _without(vertex_env(base_env, fake_api), "CLOUDSDK_AUTH_ACCESS_TOKEN")
    env["GOOGLE_APPLICATION_CREDENTIALS"] = str(
        service_account_file(tmp_path / "sa.json", token_uri)
    )

    result = run_cli(repo, env, "--all")

    assert result.returncode == 2, result.stderr
    assert "Google refused the credentials for Vertex AI" in result.stderr
    assert "Invalid JWT Signature" in result.stderr
    assert "Traceback" not in result.stderr
    assert fake_api.requests == []


def _profile_env(
    base_env: dict[str, str], fake_api: FakeMessagesAPI, profile: str
) -> dict[str, str]:
    home = Path(base_env["HOME"])
    (home / ".aws").mkdir(exist_ok=True)
    (home / ".aws" / "credentials").write_text(
        f"[ci]\naws_access_key_id = {AWS_KEY_ID}\naws_secret_access_key = {AWS_SECRET}\n"
    )
    (home / ".aws" / "config").write_text("[profile ci]\nregion = ap-south-1\n")
    env = _without(
        bedrock_env(base_env, fake_api),
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_REGION",
    )
    return {**env, "AWS_PROFILE": profile}


def test_bedrock_with_an_aws_profile_uses_its_keys_and_region(
    fake_api: FakeMessagesAPI, base_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    repo = make_planted_repo(git_repo)
    fake_api.policy = planted_script()
    fake_api.expected_key = AWS_KEY_ID

    result, _ = review(repo, _profile_env(base_env, fake_api, "ci"), tmp_path)

    assert_planted_findings(result)
    signature = fake_api.message_requests[0].headers["authorization"]
    assert "/ap-south-1/bedrock/aws4_request" in signature


def test_bedrock_with_an_unknown_aws_profile_says_so_before_any_request(
    fake_api: FakeMessagesAPI, base_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    env = {**_profile_env(base_env, fake_api, "nope"), "AWS_REGION": "eu-west-3"}

    result = run_cli(repo, env, "--all")

    assert result.returncode == 2, result.stderr
    assert "No AWS credentials for Bedrock" in result.stderr
    assert "nope" in result.stderr
    assert "Traceback" not in result.stderr
    assert fake_api.requests == []
