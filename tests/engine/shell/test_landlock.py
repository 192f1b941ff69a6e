"""The Landlock + seccomp sandbox with real shells (skips where the kernel has no Landlock)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from orch_review.engine.shell.bash import BashSession, handle_tool_call
from orch_review.engine.shell.confinement import Limits, SandboxUnavailable
from orch_review.engine.shell.landlock import LandlockLauncher, content_paths, launcher_source
from orch_review.engine.shell.sandbox import Sandbox, resolve_sandbox
from tests.conftest import GitRepoFactory, git
from tests.helpers import SOURCE_ROOT

pytestmark = pytest.mark.slow

SECRETS = {"ANTHROPIC_API_KEY": "sk-ant-canary", "GITHUB_TOKEN": "ghp_canary"}
TOKEN = "CANARY-url-token"
NOBODY = 65534


@pytest.fixture
def repo(git_repo: GitRepoFactory) -> Path:
    root = git_repo({"app.py": "print('hi')\n", "docs/guide.md": "# guide\n"})
    git(root, "config", "remote.origin.url", f"https://ci:{TOKEN}@example.invalid/r.git")
    return root


def _landlock(root: Path, limits: Limits | None = None) -> Sandbox:
    try:
        return resolve_sandbox("landlock", root, search_path="", limits=limits)
    except SandboxUnavailable as exc:
        pytest.skip(f"Landlock cannot run here: {exc}")


@pytest.fixture
def landlocked(repo: Path) -> Iterator[BashSession]:
    env = {"PATH": os.environ["PATH"], "LANG": "C.UTF-8", **SECRETS}
    with BashSession(repo, env=env, timeout=20, sandbox=_landlock(repo).launcher) as bash:
        yield bash


def test_the_shell_reads_the_content_and_writes_only_its_home(
    landlocked: BashSession, repo: Path
) -> None:
    assert landlocked.run("cat app.py").output == "print('hi')\n"
    result = landlocked.run("touch new; rm app.py; echo x >> app.py; mkdir d")
    assert result.output.count("Permission denied") == 4
    assert landlocked.run('echo kept > "$HOME/f"; cat ~/f').output == "kept\n"
    assert sorted(p.name for p in repo.iterdir()) == [".git", "app.py", "docs"]
    denied = landlocked.run("ls /tmp /root /sys /dev 2>&1; cat /etc/shadow /etc/hostname 2>&1")
    assert denied.output.count("Permission denied") == 6


def test_the_checkout_s_git_config_and_the_environment_are_out_of_reach(
    landlocked: BashSession, repo: Path
) -> None:
    output = landlocked.run(f"env; cat .git/config {repo}/.git/config; git config -l").output
    assert TOKEN not in output and "Permission denied" in output
    for value in SECRETS.values():
        assert value not in output
    assert repo / ".git" not in content_paths(repo)  # granted item by item, config left out


def test_a_link_in_the_content_grants_nothing_outside_it(repo: Path, tmp_path: Path) -> None:
    # With a .git/config holding a token, the content is granted item by item: its links
    # must not become rules for what they point to.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("CANARY-outside\n")
    outside.chmod(0o755)
    (outside / "secret").chmod(0o644)
    (repo / "link").symlink_to(outside)
    assert all(not p.is_symlink() for p in content_paths(repo))
    with BashSession(repo, env={}, timeout=20, sandbox=_landlock(repo).launcher) as bash:
        result = bash.run("cat link/secret")
    assert "CANARY-outside" not in result.output and "denied" in result.output


def test_no_network_even_to_localhost(landlocked: BashSession) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        port = server.getsockname()[1]
        script = (
            f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected; "
            f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}))'; "
            "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)'"
        )
        result = landlocked.run(script)
        assert "connected" not in result.output
        assert result.output.count("Address family not supported") >= 3
        with pytest.raises(BlockingIOError):
            server.accept()
    # A pair of Unix sockets still works (some tools talk to their children over one), but
    # no Unix socket file can be connected to (D-Bus could start a program outside).
    pair = landlocked.run("python3 -c 'import socket; print(len(socket.socketpair()))'")
    assert pair.output == "2\n"


def test_no_unix_socket_file_can_be_connected_to(landlocked: BashSession) -> None:
    where = Path(tempfile.mkdtemp(prefix="orch-review-socket-"))
    try:
        where.chmod(0o755)
        path = where / "bus"
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(str(path))
            path.chmod(0o777)
            server.listen()
            server.setblocking(False)
            script = (
                f"python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect(\"{path}\")'"
            )
            result = landlocked.run(script)
            assert "Operation not permitted" in result.output, result.output
            with pytest.raises(BlockingIOError):
                server.accept()
    finally:
        shutil.rmtree(where)


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="x86_64's syscall numbers")
def test_the_kernel_keyring_is_out_of_reach(landlocked: BashSession) -> None:
    # keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING): a user's keys live there.
    script = (
        "python3 -c 'import ctypes; c = ctypes.CDLL(None, use_errno=True); "
        "print(c.syscall(250, 0, -3, 0), ctypes.get_errno())'"
    )
    assert landlocked.run(script).output == "-1 1\n"  # EPERM


def test_other_processes_environment_and_memory_are_out_of_reach(
    landlocked: BashSession,
) -> None:
    own = landlocked.run("cat /proc/self/environ | tr '\\0' '\\n' | grep -c '^HOME='").output
    assert own == "1\n"  # its own processes, yes
    result = landlocked.run(
        f"cat /proc/{os.getpid()}/environ /proc/$PPID/environ /proc/1/environ "
        f"/proc/{os.getpid()}/mem; kill -0 {os.getpid()}"
    )
    assert result.output.count("Permission denied") == 4
    assert "not permitted" in result.output  # no signal out of the sandbox


def test_limits_stop_fork_memory_and_file_bombs(repo: Path) -> None:
    limits = Limits(processes=30, address_space_mb=512, file_size_mb=1)
    counter = (
        'python3 -c "import os, time\nn = 0\ntry:\n    while n < 500:\n'
        "        if os.fork() == 0:\n            time.sleep(60); os._exit(0)\n        n += 1\n"
        "except OSError as e:\n    print(e)\nprint('forked', n)\""
    )
    sandbox = _landlock(repo, limits)
    with BashSession(repo, env={}, timeout=20, sandbox=sandbox.launcher) as bash:
        result = bash.run(counter)
        assert "Resource temporarily unavailable" in result.output
        assert int(result.output.split("forked ")[1]) < 30
        memory = bash.run("python3 -c 'bytearray(1 << 30)'")
        assert "MemoryError" in memory.output and memory.exit_code == 1
        outcome = handle_tool_call(bash, {"command": 'head -c 2000000 /dev/zero > "$HOME/big"'})
        assert outcome.text.endswith(
            "[exit code: 153; a command hit the file size limit (SIGXFSZ)]"
        )


@pytest.mark.skipif(os.geteuid() != 0, reason="only root's shells change uid")
def test_as_root_every_process_of_the_shell_dies_with_it(repo: Path) -> None:
    marker = f"orch-review-test-{os.getpid()}-{time.monotonic_ns()}"
    with BashSession(repo, env={}, timeout=20, sandbox=_landlock(repo).launcher) as bash:
        assert int(bash.run("id -u").output) >= 0x6F000000
        bash.run(f"setsid bash -c 'exec -a {marker} sleep 1000' &")  # leaves the group
        _wait_until(lambda: _count(marker) == 1)  # the background exec may still be on its way
        assert _count(marker) == 1
    _wait_until(lambda: _count(marker) == 0)
    assert _count(marker) == 0


def _wait_until(done: Callable[[], bool], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        time.sleep(0.02)


def _count(marker: str) -> int:
    found = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                found += marker.encode() in Path(entry.path, "cmdline").read_bytes()
            except OSError:
                continue
    return found


def _system_python() -> str | None:
    """An interpreter a uid with no rights of its own can run (the launcher needs only the
    standard library)."""
    for name in ("python3", f"python3.{sys.version_info.minor}"):
        found = shutil.which(name, path="/usr/bin:/bin:/usr/local/bin")
        if (
            found is not None
            and subprocess.run(
                [
                    "setpriv",
                    f"--reuid={NOBODY}",
                    f"--regid={NOBODY}",
                    "--clear-groups",
                    found,
                    "-c",
                    "pass",
                ],
                capture_output=True,
                check=False,
            ).returncode
            == 0
        ):
            return found
    return None


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root and setpriv to run both sides as one regular user",
)
def test_as_a_regular_user_the_shell_cannot_read_that_user_s_other_processes() -> None:
    """What protects the environment of orch-review and of the shell that started it when
    the agents' shell runs as the same user: Landlock's ptrace scoping, nothing else."""
    python = _system_python()
    if python is None:
        pytest.skip(f"uid {NOBODY} can run no Python interpreter here")
    where = Path(tempfile.mkdtemp(prefix="orch-review-landlock-user-"))
    where.chmod(0o755)  # pytest's own tmp_path is root's, mode 0700
    content = where / "content"
    content.mkdir()
    (content / "app.py").write_text("x = 1\n")
    as_nobody = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    victim = subprocess.Popen([*as_nobody, "sleep", "60"], env={"CANARY": "CANARY-parent-secret"})
    try:
        # Another interpreter than this one: it runs the launcher's source, not this one's
        # compiled code (a file of root's, in another bytecode format).
        launcher = LandlockLauncher(Limits(), python, launcher_source())
        launch = launcher.launch(content, {"PATH": "/usr/bin:/bin"}, ("bash", "-c", "x"))
        argv = list(launch.argv)
        at = argv.index("--uid")  # what root's shells get; a regular user's do not
        del argv[at : at + 2]
        script = (
            f"cat app.py; tr '\\0' '\\n' < /proc/{victim.pid}/environ; kill -0 {victim.pid}; "
            f"cat /proc/{victim.pid}/cwd/x; id -u"
        )
        argv[-1] = script
        home = launch.env["HOME"]
        os.chown(home, NOBODY, NOBODY)
        done = subprocess.run(
            [*as_nobody, *argv],
            cwd=content,
            env=dict(launch.env),
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if launch.cleanup is not None:
            launch.cleanup()
    finally:
        victim.kill()
        victim.wait()
        shutil.rmtree(where)
    said = done.stdout + done.stderr
    assert "x = 1" in said and f"{NOBODY}" in done.stdout, said
    assert "CANARY-parent-secret" not in said
    assert said.count("Permission denied") >= 2 and "not permitted" in said, said


def test_auto_without_landlock_gives_no_shell_and_on_refuses(repo: Path, tmp_path: Path) -> None:
    """Landlock made unavailable for real, by a seccomp filter the whole process inherits."""
    program = (
        "import sys\n"
        "from pathlib import Path\n"
        "from orch_review.engine.shell.sandbox import resolve_sandbox\n"
        "from orch_review.engine.shell.confinement import SandboxUnavailable\n"
        "root, missing = Path(sys.argv[1]), Path(sys.argv[2])\n"
        "s = resolve_sandbox('auto', root, search_path='', bwrap_path=missing)\n"
        "print(s.kind, s.has_shell)\n"
        "print(s.notice)\n"
        "try:\n"
        "    resolve_sandbox('on', root, search_path='', bwrap_path=missing)\n"
        "except SandboxUnavailable as exc:\n"
        "    print('refused', exc.exit_code, exc)\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.no_landlock",
            sys.executable,
            "-c",
            program,
            str(repo),
            str(tmp_path / "no" / "bwrap"),
        ],
        cwd=SOURCE_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    lines = done.stdout.splitlines()
    assert lines[0] == "tools False", done.stdout + done.stderr
    assert "Landlock is not available in this kernel or container" in lines[1]
    assert "agents get no shell" in lines[1] and "bwrap-path" in lines[1]
    assert lines[2].startswith("refused 2 --sandbox on needs a sandboxed shell")
    assert "sudo apt-get install bubblewrap" in lines[2] and "landlock_*" in lines[2]


def test_the_launcher_runs_compiled_code_no_one_else_may_write() -> None:
    """Each shell loads the launcher compiled once, from a file it reads before it drops
    root or confines itself: only this user may have written it."""
    source = LandlockLauncher.find(Limits()).source
    (path,) = re.findall(r"open\('([^']+)'", source)
    assert os.stat(path).st_uid == os.geteuid()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    assert LandlockLauncher.find(Limits()).source == source  # compiled once a process
