"""The GitHub token goes to the GitHub API's scheme, host and port, and nowhere else.

A paginated answer names its next page in a ``Link`` header; one that points at the same host
on another port (or another scheme, or another host) must not get ``Authorization``. Two
servers on 127.0.0.1 with different ports: the API, whose answer links to the other, and the
other, which records every request.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from orch_review.hosts.github.api import GitHubApiError, GitHubClient
from tests.fakes.http_server import Exchange, LocalHTTPServer
from tests.security.verdicts import HOST_RESULTS, HostVerdict

pytestmark = pytest.mark.slow

TOKEN = "ghs_CANARY_origin_token"


class Servers:
    """The API on one port, a listener on another; the API's first page links to ``link``."""

    def __init__(self) -> None:
        self.link = ""
        self.api_seen: list[dict[str, str]] = []
        self.other_seen: list[dict[str, str]] = []
        self.api = LocalHTTPServer(self._api, name="api")
        self.other = LocalHTTPServer(self._other, name="other-port")

    def _api(self, exchange: Exchange) -> None:
        self.api_seen.append(dict(exchange.headers))
        if "page=2" in exchange.path:
            exchange.send_json(200, [{"filename": "b.py"}])
            return
        exchange.send_json(200, [{"filename": "a.py"}], {"link": f'<{self.link}>; rel="next"'})

    def _other(self, exchange: Exchange) -> None:
        self.other_seen.append(dict(exchange.headers))
        exchange.send_json(200, [{"filename": "stolen.py"}])


@pytest.fixture
def servers() -> Iterator[Servers]:
    both = Servers()
    both.api.start()
    both.other.start()
    yield both
    both.api.stop()
    both.other.stop()


def _page_two(base: str) -> str:
    return f"{base}/repos/o/r/pulls/7/files?per_page=100&page=2"


@pytest.mark.parametrize("where", ["other-port", "other-scheme", "other-host"])
def test_a_next_link_away_from_the_api_gets_no_token(
    where: str, servers: Servers, request: pytest.FixtureRequest
) -> None:
    api = servers.api.base_url
    port = api.rsplit(":", 1)[1]
    servers.link = {
        "other-port": _page_two(servers.other.base_url),
        "other-scheme": _page_two(f"https://127.0.0.1:{port}"),
        "other-host": _page_two(f"http://localhost:{port}"),
    }[where]

    error: GitHubApiError | None = None
    with GitHubClient(api, "o/r", TOKEN, max_attempts=1) as client:
        try:
            client.pull_files(7)
        except GitHubApiError as exc:
            error = exc

    leaked = [h for h in servers.other_seen if TOKEN in str(h)]
    extra = servers.api_seen[1:]  # `localhost` reaches the API's port too
    request.config.stash[HOST_RESULTS].append(
        HostVerdict(
            f"5. the token on a Link: next to the API's {where.replace('-', ' ')}",
            not leaked and not servers.other_seen and not extra,
            f"sent to the other server: {servers.other_seen}, extra requests: {extra}",
        )
    )
    assert servers.other_seen == [] and extra == []
    assert error is not None and "leads away from the GitHub API" in str(error)
    assert TOKEN not in str(error)
    assert servers.api_seen[0]["Authorization"] == f"Bearer {TOKEN}"


def test_a_next_link_on_the_api_s_own_origin_is_followed(servers: Servers) -> None:
    # The same origin spelled with the scheme's case and the explicit address.
    servers.link = _page_two(servers.api.base_url.replace("http://", "HTTP://"))

    with GitHubClient(servers.api.base_url, "o/r", TOKEN, max_attempts=1) as client:
        files = client.pull_files(7)

    assert [f["filename"] for f in files] == ["a.py", "b.py"]
    assert [h["Authorization"] for h in servers.api_seen] == [f"Bearer {TOKEN}"] * 2
