"""Landlock shells forked by a review's zygote: confined as a launcher of their own confines
them, each with its own rules, and no zygote or shell outliving the review (skips where the
kernel has no Landlock)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from orch_review import ReviewOptions, review
from orch_review.engine.shell.bash import BashSession
from orch_review.engine.shell.confinement import Limits, SandboxUnavailable
from orch_review.engine.shell.landlock import LandlockLauncher, launcher_source
from orch_review.engine.shell.sandbox import Sandbox, resolve_sandbox
from orch_review.engine.shell.zygote import Zygote
from orch_review.events import AgentEvent
from tests.conftest import GitRepoFactory, git
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import ORCH_REVIEW, SOURCE_ROOT, cli_env, make_planted_repo
from tests.scripted import PLANTED_INJECTION, ReviewScript, planted_script

pytestmark = pytest.mark.slow

SECRETS = {"ANTHROPIC_API_KEY": "sk-ant-canary", "GITHUB_TOKEN": "ghp_canary"}
TOKEN = "CANARY-url-token"


@pytest.fixture
def repo(git_repo: GitRepoFactory) -> Path:
    root = git_repo({"app.py": "print('hi')\n"})
    git(root, "config", "remote.origin.url", f"https://ci:{TOKEN}@example.invalid/r.git")
    return root


@pytest.fixture
def env() -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "LANG": "C.UTF-8", **SECRETS}


@pytest.fixture
def landlock(repo: Path) -> Iterator[Sandbox]:
    try:
        sandbox = resolve_sandbox("landlock", repo, search_path="")
    except SandboxUnavailable as exc:
        pytest.skip(f"Landlock cannot run here: {exc}")
    try:
        yield sandbox
    finally:
        sandbox.close()


def _zygote_pid(sandbox: Sandbox) -> int:
    assert isinstance(sandbox.launcher, LandlockLauncher)
    assert sandbox.launcher.zygote is not None
    pid = sandbox.launcher.zygote.pid
    assert pid is not None, "the probe's shell did not start the zygote"
    return pid


def _parent(bash: BashSession) -> int:
    return int(bash.run("echo $PPID").output)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def _wait_until(done: Callable[[], bool], seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _zygotes_of(parent: int) -> list[int]:
    """The zygotes ``parent`` started that still run."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            status = Path(entry.path, "status").read_text()
            cmdline = Path(entry.path, "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if int(fields["PPid"]) == parent and b"--zygote" in cmdline and _alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def test_a_shell_from_the_zygote_is_confined_as_a_launched_one(
    landlock: Sandbox, repo: Path, env: dict[str, str]
) -> None:
    zygote = _zygote_pid(landlock)
    with BashSession(repo, env=env, timeout=20, sandbox=landlock.launcher) as bash:
        assert _parent(bash) == zygote  # forked by the zygote, not started on its own
        assert bash.run("cat app.py").output == "print('hi')\n"
        home = Path(os.path.expanduser("~")).resolve()
        secrets = bash.run(
            f"env; cat .git/config; ls {home}; cat /proc/{os.getpid()}/environ "
            f"/proc/{zygote}/environ /proc/{zygote}/cmdline >/dev/null"
        ).output
        assert TOKEN not in secrets and not any(v in secrets for v in SECRETS.values())
        assert secrets.count("Permission denied") == 4, secrets
        writes = bash.run(f"touch new {repo}/.git/x /tmp/x; echo kept > ~/f; cat ~/f").output
        assert writes.count("Permission denied") == 3 and writes.endswith("kept\n")
        # Nothing of the zygote's but the shell's own streams: no control socket.
        held = bash.run("for fd in /proc/$$/fd/*; do readlink $fd; done").output.split()
        assert held and not [f for f in held if not f.startswith(("pipe:", "/dev/null"))], held
        with socket.socket() as server:
            server.bind(("127.0.0.1", 0))
            server.listen()
            server.setblocking(False)
            port = server.getsockname()[1]
            tcp = bash.run(f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected").output
            assert "connected" not in tcp and "Address family not supported" in tcp
            with pytest.raises(BlockingIOError):
                server.accept()
    assert sorted(p.name for p in repo.iterdir()) == [".git", "app.py"]
    # The zygote holds no secret of the review's.
    assert Path(f"/proc/{zygote}/environ").read_bytes() == b""


def test_two_shells_of_one_zygote_have_their_own_home_and_rules(
    landlock: Sandbox, repo: Path, env: dict[str, str]
) -> None:
    zygote = _zygote_pid(landlock)
    with (
        BashSession(repo, env=env, timeout=20, sandbox=landlock.launcher) as first,
        BashSession(repo, env=env, timeout=20, sandbox=landlock.launcher) as second,
    ):
        assert _parent(first) == _parent(second) == zygote
        home = first.run('echo CANARY-first > "$HOME/mine"; echo "$HOME"').output.strip()
        other = second.run('echo "$HOME"').output.strip()
        assert home != other
        assert first.run('cat "$HOME/mine"').output == "CANARY-first\n"
        read = second.run(f"cat {home}/mine; ls {home}; touch {home}/theirs").output
        assert "CANARY" not in read and read.count("Permission denied") == 3, read


def test_the_bash_session_behaves_as_with_a_shell_of_its_own(
    landlock: Sandbox, repo: Path, env: dict[str, str]
) -> None:
    zygote = _zygote_pid(landlock)
    with BashSession(repo, env=env, timeout=3, output_cap=2000, sandbox=landlock.launcher) as bash:
        background = int(bash.run("sleep 1000 & echo $!").output)
        timed_out = bash.run("echo started; sleep 100")
        assert timed_out.timed_out and timed_out.output.startswith("started\n")
        assert _wait_until(lambda: not _alive(background))
        exited = bash.run("sleep 1000 & echo $!; exit 4")
        assert exited.exit_code == 4 and "shell exited with code 4" in exited.output
        assert _wait_until(lambda: not _alive(int(exited.output.split()[0])))
        runaway = bash.run("head -c 100000000 /dev/zero | tr '\\0' y")
        assert runaway.overflowed and len(runaway.output) <= 2000
        assert bash.run("pwd").output == f"{repo}\n"
        assert _parent(bash) == zygote
        last = int(bash.run("sleep 1000 & echo $!").output)
    assert _wait_until(lambda: not _alive(last))  # close() killed the background job

    def worker(n: int) -> list[str]:
        with BashSession(repo, env=env, timeout=30, sandbox=landlock.launcher) as shell:
            shell.run(f"export WORKER={n}")
            return [shell.run(f'echo "$WORKER:{i}" $PPID').output for i in range(5)]

    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(worker, range(6)))
    for n, outputs in enumerate(results):
        assert outputs == [f"{n}:{i} {zygote}\n" for i in range(5)]


def test_closing_the_sandbox_stops_the_zygote_and_its_shells(
    landlock: Sandbox, repo: Path, env: dict[str, str]
) -> None:
    zygote = _zygote_pid(landlock)
    bash = BashSession(repo, env=env, timeout=20, sandbox=landlock.launcher)
    shell = int(bash.run("echo $$").output)
    job = int(bash.run("setsid sleep 1000 & echo $!").output)  # leaves the shell's group
    landlock.close()
    assert not _alive(zygote)
    assert _wait_until(lambda: not _alive(shell))
    if os.geteuid() == 0:  # every process of the shell's uid goes with it
        assert _wait_until(lambda: not _alive(job))
    else:
        os.kill(job, signal.SIGKILL)
    bash.close()


# Resolves the Landlock sandbox, starts a shell with a background job, says the pids, waits.
_REVIEWER = """
import os, sys, time
from pathlib import Path
from orch_review.engine.shell.bash import BashSession
from orch_review.engine.shell.sandbox import resolve_sandbox
sandbox = resolve_sandbox("landlock", Path(sys.argv[1]), search_path="")
bash = BashSession(Path(sys.argv[1]), env={"PATH": os.environ["PATH"]}, sandbox=sandbox.launcher)
job = bash.run("sleep 1000 & echo $!").output.strip()
print(sandbox.launcher.zygote.pid, bash.run("echo $$").output.strip(), job, flush=True)
time.sleep(600)
"""


def test_the_zygote_and_its_shells_die_with_a_killed_review_process(
    landlock: Sandbox, repo: Path
) -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", _REVIEWER, str(repo)],
        cwd=SOURCE_ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        zygote, shell, job = (int(pid) for pid in process.stdout.readline().split())
        assert _zygotes_of(process.pid) == [zygote]
        assert all(_alive(pid) for pid in (zygote, shell, job))
    finally:
        process.kill()
        process.wait()
    left = [zygote, shell, job]
    assert _wait_until(lambda: not any(_alive(pid) for pid in left)), "outlived the review"


def test_no_zygote_is_left_once_review_returns(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    repo = make_planted_repo(git_repo)
    try:
        resolve_sandbox("landlock", repo, search_path="").close()
    except SandboxUnavailable as exc:
        pytest.skip(f"Landlock cannot run here: {exc}")
    fake_api.policy = planted_script()
    before = set(_zygotes_of(os.getpid()))  # another test's, not yet collected
    seen: list[set[int]] = []

    def events(event: AgentEvent) -> None:
        seen.append(set(_zygotes_of(os.getpid())) - before)

    settings = {"sandbox": "landlock", "journal": False}
    report = review(
        repo, ReviewOptions(all_files=True, settings=settings), env=api_env, events=events
    )

    assert [f.location for f in report.confirmed] == ["app.py:6"]
    assert any(len(running) == 1 for running in seen)  # the review's shells had a zygote
    assert set(_zygotes_of(os.getpid())) - before == set()


def test_without_a_zygote_each_shell_starts_its_own_launcher_confined(
    repo: Path, env: dict[str, str]
) -> None:
    """A zygote that cannot start, and one that dies during the review."""
    try:
        resolve_sandbox("landlock", repo, search_path="").close()
    except SandboxUnavailable as exc:
        pytest.skip(f"Landlock cannot run here: {exc}")
    found = LandlockLauncher.find(Limits())
    failing = Zygote((sys.executable, "-I", "-S", "-c", "raise SystemExit(3)"))
    missing = Zygote((str(repo / "no-such-python"),))
    for zygote in (failing, missing, found.zygote):
        launcher = LandlockLauncher(found.limits, found.python, found.source, zygote)
        if zygote is found.zygote:
            with BashSession(repo, env=env, timeout=20, sandbox=launcher) as bash:
                assert _parent(bash) == _zygote_pid(Sandbox("landlock", launcher))
            assert zygote is not None and zygote.pid is not None
            os.kill(zygote.pid, signal.SIGKILL)
        with BashSession(repo, env=env, timeout=20, sandbox=launcher) as bash:
            assert _parent(bash) == os.getpid()  # a launcher of its own, then the shell
            said = bash.run(f"env; cat .git/config; cat /proc/{os.getpid()}/environ").output
            assert TOKEN not in said and not any(v in said for v in SECRETS.values())
            assert said.count("Permission denied") == 2, said
        launcher.close()


def test_a_shell_whose_rules_are_too_large_for_the_zygote_starts_on_its_own(
    landlock: Sandbox, repo: Path, git_repo: GitRepoFactory, env: dict[str, str]
) -> None:
    """Content granted item by item (its .git/config holds a token) with thousands of
    entries at its top: more rules than one message to the zygote may carry."""
    zygote = _zygote_pid(landlock)
    wide = git_repo({f"{'wide-entry-' * 8}{n:05d}.txt": "x\n" for n in range(3000)})
    git(wide, "config", "remote.origin.url", f"https://ci:{TOKEN}@example.invalid/r.git")
    with BashSession(wide, env=env, timeout=20, sandbox=landlock.launcher) as bash:
        assert _parent(bash) == os.getpid()
        said = bash.run(f"cat .git/config; cat {'wide-entry-' * 8}02999.txt").output
        assert TOKEN not in said and said.endswith("Permission denied\nx\n"), said
    with BashSession(repo, env=env, timeout=20, sandbox=landlock.launcher) as bash:
        assert _parent(bash) == zygote  # the zygote serves the next shell all the same


NOBODY = 65534


def _python_for(uid: int) -> str | None:
    """An interpreter ``uid`` can run (the launcher needs only the standard library)."""
    for name in ("python3", f"python3.{sys.version_info.minor}"):
        found = shutil.which(name, path="/usr/bin:/bin:/usr/local/bin")
        as_uid = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
        if found and subprocess.run([*as_uid, found, "-c", ""], check=False).returncode == 0:
            return found
    return None


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root and setpriv to run the zygote and its shells as one regular user",
)
def test_as_a_regular_user_a_shell_cannot_reach_its_zygote_or_that_user_s_processes() -> None:
    """The zygote runs unconfined as the same user as its shells: Landlock's scoping is
    what keeps them from reading or signalling it, as any other process of that user."""
    python = _python_for(NOBODY)
    if python is None:
        pytest.skip(f"uid {NOBODY} can run no Python interpreter here")
    where = Path(tempfile.mkdtemp(prefix="orch-review-zygote-user-"))
    where.chmod(0o755)
    content = where / "content"
    content.mkdir()
    (content / "app.py").write_text("x = 1\n")
    as_nobody = ("setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups")
    zygote = Zygote((*as_nobody, python, "-I", "-S", "-c", launcher_source()))
    victim = subprocess.Popen([*as_nobody, "sleep", "60"], env={"CANARY": "CANARY-user-secret"})
    launch = None
    try:
        launch = LandlockLauncher(Limits(), python, launcher_source()).launch(
            content, {"PATH": "/usr/bin:/bin"}, ("bash", "--noprofile", "--norc")
        )
        options = list(launch.argv[5:])  # after `python -I -S -c SOURCE`
        at = options.index("--uid")  # what root's shells get; a regular user's do not
        del options[at : at + 2]
        os.chown(launch.env["HOME"], NOBODY, NOBODY)
        shell = zygote.spawn(options, launch.env, content)
        assert zygote.pid is not None
        script = (
            f"cat app.py; id -u; echo $PPID; tr '\\0' '\\n' < /proc/{victim.pid}/environ; "
            f"ls /proc/{zygote.pid}/fd; kill -0 {victim.pid}; kill -KILL {zygote.pid}; exit\n"
        )
        assert shell.stdin is not None and shell.stdout is not None
        shell.stdin.write(script.encode())
        said = shell.stdout.read().decode()
        assert shell.wait(30) == 1
        assert said.startswith(f"x = 1\n{NOBODY}\n{zygote.pid}\n"), said
        assert "CANARY" not in said and said.count("Permission denied") == 2, said
        assert said.count("not permitted") == 2, said
        assert _alive(zygote.pid)
    finally:
        zygote.close()
        victim.kill()
        victim.wait()
        if launch is not None and launch.cleanup is not None:
            launch.cleanup()
        shutil.rmtree(where)


def test_a_zygote_that_stops_answering_is_given_up(repo: Path, env: dict[str, str]) -> None:
    try:
        resolve_sandbox("landlock", repo, search_path="").close()
    except SandboxUnavailable as exc:
        pytest.skip(f"Landlock cannot run here: {exc}")
    found = LandlockLauncher.find(Limits())
    zygote = Zygote((found.python, "-I", "-S", "-c", found.source), timeout=2)
    launcher = LandlockLauncher(found.limits, found.python, found.source, zygote)
    with BashSession(repo, env=env, timeout=20, sandbox=launcher) as bash:
        parent = _parent(bash)
        assert parent == zygote.pid
        os.kill(parent, signal.SIGSTOP)  # as a shell of the same user could, before ABI 6
        try:
            with BashSession(repo, env=env, timeout=20, sandbox=launcher) as other:
                assert _parent(other) == os.getpid()
                assert "Permission denied" in other.run("cat .git/config").output
        finally:
            os.kill(parent, signal.SIGCONT)
            launcher.close()
    assert not _alive(parent)


def _with_marker(marker: str) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if marker.encode() in Path(entry.path, "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return [pid for pid in found if _alive(pid)]


def test_no_zygote_or_shell_outlives_a_killed_orch_review(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory
) -> None:
    """The real command, killed while an agent's shell runs a job in the background."""
    repo = make_planted_repo(git_repo)
    try:
        resolve_sandbox("landlock", repo, search_path="").close()
    except SandboxUnavailable as exc:
        pytest.skip(f"Landlock cannot run here: {exc}")
    marker = f"orch-review-zygote-test-{os.getpid()}-{time.monotonic_ns()}"
    job = f"(exec -a {marker} sleep 1000) & exec -a {marker}-shell sleep 1000"
    fake_api.policy = ReviewScript([PLANTED_INJECTION], scout=job)
    env = {**api_env, "ORCH_REVIEW_SANDBOX": "landlock", "ORCH_REVIEW_BASH_TIMEOUT": "600"}
    process = subprocess.Popen(
        [*ORCH_REVIEW, "--all", "--no-journal"],
        cwd=repo,
        env=cli_env(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert _wait_until(lambda: len(_with_marker(marker)) == 2, seconds=120)
        zygotes = _zygotes_of(process.pid)
        assert len(zygotes) == 1
    finally:
        process.kill()
        process.wait()
    left = [*zygotes, *_with_marker(marker)]
    assert _wait_until(lambda: not any(_alive(pid) for pid in left)), "outlived orch-review"
