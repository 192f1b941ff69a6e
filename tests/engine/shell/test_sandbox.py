"""Sandbox policies with real bwrap and real shells (bwrap tests skip where it cannot run)."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from orch_review.engine.shell.bash import BashSession, handle_tool_call
from orch_review.engine.shell.bwrap import (
    BubblewrapLauncher,
    _created_parents,
    git_paths,
    sanitized_git_config,
)
from orch_review.engine.shell.confinement import Limits, SandboxUnavailable, agent_environment
from orch_review.engine.shell.sandbox import (
    INSTALL_HINT,
    Sandbox,
    apparmor_hint,
    overlay_works,
    resolve_sandbox,
)
from orch_review.errors import ExitCode
from orch_review.scope.view import View
from tests.conftest import GitRepoFactory, git

SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-canary",
    "GITHUB_TOKEN": "ghp_canary",
    "AWS_SECRET_ACCESS_KEY": "aws-canary",
    "GIT_DIR": "/somewhere/else",
}
TOKEN = "CANARY-extraheader-token"


@pytest.fixture
def repo(git_repo: GitRepoFactory) -> Path:
    root = git_repo({"app.py": "print('hi')\n", "docs/guide.md": "# guide\n"})
    git(root, "config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {TOKEN}")
    return root


@pytest.fixture
def host_env() -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "LANG": "C.UTF-8", **SECRETS}


def _bwrap(root: Path, limits: Limits | None = None) -> Sandbox:
    try:
        return resolve_sandbox("bubblewrap", root, search_path=os.environ["PATH"], limits=limits)
    except SandboxUnavailable as exc:
        pytest.skip(f"bubblewrap cannot run here: {exc}")


@pytest.fixture
def bwrapped(repo: Path, host_env: dict[str, str]) -> Iterator[BashSession]:
    with BashSession(repo, env=host_env, timeout=20, sandbox=_bwrap(repo)) as bash:
        yield bash


def _processes_with(marker: str) -> list[int]:
    """Host pids whose command line contains ``marker``."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if marker.encode() in Path(entry.path, "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _wait_for(marker: str, count: int) -> int:
    """How many host processes carry ``marker``, once that is ``count`` or after a while."""
    # Starting and killing (namespace teardown) are asynchronous: poll, then decide (an upper
    # bound for a loaded machine: the count is usually right at once).
    deadline = time.monotonic() + 30
    while len(found := _processes_with(marker)) != count and time.monotonic() < deadline:
        time.sleep(0.02)
    return len(found)


# The agents' environment


def test_agent_environment_keeps_nothing_secret() -> None:
    env = {**SECRETS, "PATH": "/usr/bin:.:bin::/bin:/usr/bin", "LANG": "de_DE.UTF-8", "TZ": "UTC"}
    result = agent_environment(env, "/tmp/home")
    assert not set(SECRETS) & set(result)
    assert result["PATH"] == "/usr/bin:/bin"  # relative entries would run the content's scripts
    assert (result["HOME"], result["TMPDIR"]) == ("/tmp/home", "/tmp/home")
    assert (result["LANG"], result["TZ"], result["TERM"]) == ("de_DE.UTF-8", "UTC", "dumb")
    assert agent_environment({}, "/h")["PATH"] == "/usr/local/bin:/usr/bin:/bin"


# Choosing a policy


def test_off_is_no_sandbox_and_says_so(tmp_path: Path) -> None:
    sandbox = resolve_sandbox("off", tmp_path, search_path="")
    assert sandbox.kind == "none" and sandbox.notice is not None
    assert sandbox.notice.startswith("WARNING: --sandbox off")


def test_tools_is_no_shell(tmp_path: Path) -> None:
    sandbox = resolve_sandbox("tools", tmp_path, search_path="")
    assert (sandbox.kind, sandbox.has_shell) == ("tools", False)


def test_bubblewrap_without_bwrap_refuses_in_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailable) as info:
        resolve_sandbox("bubblewrap", tmp_path, search_path=str(tmp_path / "empty"))
    assert info.value.exit_code == ExitCode.USAGE
    message = str(info.value)
    assert "bwrap is not installed (not found on PATH)" in message
    assert INSTALL_HINT in message and "sudo apt-get install bubblewrap" in message
    assert message.count(". ") == 0 and message.endswith(".")


@pytest.mark.slow
def test_auto_without_bwrap_takes_landlock_and_says_why(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "bwrap"
    tmp_path.chmod(0o755)  # root's shells run as another uid, which must read the content
    sandbox = resolve_sandbox("auto", tmp_path, search_path="", bwrap_path=missing)
    if sandbox.kind == "tools":
        pytest.skip(f"Landlock cannot run here either: {sandbox.notice}")
    assert (sandbox.kind, sandbox.has_shell) == ("landlock", True)
    assert sandbox.notice is not None
    assert f"bwrap-path {missing} is not an executable file" in sandbox.notice
    assert "run under landlock instead" in sandbox.notice
    on = resolve_sandbox("on", tmp_path, search_path="", bwrap_path=missing)
    assert on.kind == "landlock"


@pytest.mark.slow
def test_a_failing_bwrap_is_reported_with_its_own_words(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = --help ]; then echo "usage: bwrap --unshare-user"; exit 0; fi\n'
        'echo "bwrap: setting up uid map: Permission denied" >&2; exit 1\n'
    )
    fake.chmod(0o755)
    with pytest.raises(SandboxUnavailable, match="failed here: bwrap: setting up uid map"):
        resolve_sandbox("bubblewrap", tmp_path, search_path=os.environ["PATH"], bwrap_path=fake)


def test_apparmor_restriction_is_named(tmp_path: Path) -> None:
    sysctl = tmp_path / "apparmor_restrict_unprivileged_userns"
    sysctl.write_text("1\n")
    hint = apparmor_hint(sysctl, euid=1000)
    assert hint is not None
    assert "kernel.apparmor_restrict_unprivileged_userns" in hint
    assert "/etc/apparmor.d/bwrap-userns-restrict" in hint
    assert apparmor_hint(sysctl, euid=0) is None  # root is not restricted
    sysctl.write_text("0\n")
    assert apparmor_hint(sysctl, euid=1000) is None
    assert apparmor_hint(tmp_path / "missing", euid=1000) is None


# The bwrap command line


def test_bwrap_command_line_for_a_regular_user(tmp_path: Path) -> None:
    launcher = BubblewrapLauncher("/x/bwrap", frozenset({"--disable-userns", "--size"}), Limits())
    argv = launcher.argv(tmp_path, [], [], ("bash",))
    for option in ("--die-with-parent", "--new-session", "--unshare-net", "--unshare-pid"):
        assert option in argv
    assert argv[argv.index("--uid") + 1] == "65534"
    assert "--disable-userns" in argv and "--cap-add" not in argv
    assert argv[argv.index("--tmpfs") - 2 :][:3] == ("--size", str(1024 << 20), "--tmpfs")
    bind = argv.index(str(tmp_path))
    assert argv[bind - 1 : bind + 2] == ("--ro-bind", str(tmp_path), str(tmp_path))
    assert argv[-1] == "bash" and "ulimit -HS" in argv[-3]


def test_bwrap_command_line_for_root_drops_to_an_unused_uid(tmp_path: Path) -> None:
    launcher = BubblewrapLauncher("/x/bwrap", frozenset(), Limits(), setpriv="/usr/bin/setpriv")
    argv = launcher.argv(tmp_path, [], [], ("bash",))
    assert "--unshare-user" not in argv  # a user namespace would map the shell to root
    setpriv = argv.index("/usr/bin/setpriv")
    uid = int(argv[setpriv + 1].removeprefix("--reuid="))
    assert uid >= 0x6F000000
    assert "--no-new-privs" in argv[setpriv:] and "--bounding-set=-all" in argv[setpriv:]


def test_an_overlay_view_is_one_read_only_overlay_its_layers_bottom_first(
    tmp_path: Path,
) -> None:
    work, layer, root = tmp_path / "work", tmp_path / "layer", tmp_path / "root"
    steps = (("overlay", str(work), str(layer), str(root)), ("bind", "/git", f"{root}/.git"))
    view = View(root, steps, ())
    options = frozenset({"--overlay-src", "--ro-overlay"})
    argv = BubblewrapLauncher("/x/bwrap", options, Limits()).argv(
        root, [], [], ("bash",), view=view
    )
    at = argv.index("--overlay-src")
    # bwrap: "--overlay-src SRC" bottom to top, then "--ro-overlay DEST" (bubblewrap 0.11).
    assert argv[at : at + 7] == (
        "--overlay-src", str(work), "--overlay-src", str(layer), "--ro-overlay", str(root),
        "--ro-bind",
    )  # fmt: skip
    older = BubblewrapLauncher("/x/bwrap", frozenset(), Limits())
    with pytest.raises(SandboxUnavailable, match="cannot mount an overlay"):
        older.argv(root, [], [], ("bash",), view=view)


@pytest.mark.slow
@pytest.mark.parametrize(
    "bwrap",
    [
        'echo "usage: bwrap --unshare-user --ro-bind"',  # before 0.11: no overlays
        'if [ "$1" = --help ]; then echo "--overlay-src --ro-overlay"; exit 0; fi\n'
        'echo "bwrap: Can\'t make overlay mount: Operation not permitted" >&2; exit 1',
    ],
    ids=["bwrap-before-0.11", "kernel-refuses"],
)
def test_no_overlay_where_bwrap_or_the_kernel_cannot_mount_one(tmp_path: Path, bwrap: str) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text(f"#!/bin/sh\n{bwrap}\n")
    fake.chmod(0o755)
    found = overlay_works("auto", tmp_path, search_path=os.environ["PATH"], bwrap_path=fake)
    assert found is False
    for mode in ("landlock", "tools", "off"):  # no bubblewrap, no test shell
        assert overlay_works(mode, tmp_path, search_path="", bwrap_path=fake) is False


def test_parents_of_mounts_are_opened_up_but_not_mounts() -> None:
    mounts = [Path("/tmp/a/b/repo"), Path("/srv/git/objects"), Path("/tmp/a/b/repo/.git/x")]
    assert _created_parents(mounts) == [
        Path("/etc"),
        Path("/srv"),
        Path("/srv/git"),
        Path("/tmp/a"),
        Path("/tmp/a/b"),
    ]


def test_git_config_keeps_what_git_needs_and_drops_credentials() -> None:
    text = (
        "[core]\n\trepositoryformatversion = 1\n\tfsmonitor = curl evil\n\tbare = false\n"
        '[remote "origin"]\n\turl = https://x-access-token:SECRET1@github.com/o/r\n'
        '[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic SECRET2\n'
        "[credential]\n\thelper = store\n[extensions]\n\tobjectFormat = sha256\n"
        "[Core]\n\tpager = less \\\n  -R\n\tignorecase = true\n"
        '[includeIf "gitdir:/x"]\n\tpath = /secrets\n'
    )
    assert sanitized_git_config(text) == (
        "[core]\n\trepositoryformatversion = 1\n\tbare = false\n"
        "[extensions]\n\tobjectFormat = sha256\n[core]\n\tignorecase = true\n"
    )


def test_git_paths_of_a_linked_worktree(repo: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(worktree), "-b", "topic")
    extra, configs = git_paths(worktree)
    assert extra == [(repo / ".git").resolve()]
    assert configs == [(repo / ".git" / "config").resolve()]


def test_git_paths_follow_alternates(repo: Path, tmp_path: Path) -> None:
    borrower = tmp_path / "borrower"
    git(tmp_path, "init", "-q", str(borrower))
    alternates = borrower / ".git" / "objects" / "info" / "alternates"
    alternates.write_text(f"{repo / '.git' / 'objects'}\n")
    extra, configs = git_paths(borrower)
    assert extra == [(repo / ".git" / "objects").resolve()]
    assert configs == [borrower / ".git" / "config"]


# Under bubblewrap


def test_content_is_read_only_and_tmp_is_a_private_home(bwrapped: BashSession) -> None:
    result = bwrapped.run("touch new; rm app.py; echo x >> app.py; git commit -qm x --allow-empty")
    assert result.output.count("Read-only file system") >= 3
    assert bwrapped.run('echo kept > "$HOME/f"; cat ~/f; echo "$HOME"').output == "kept\n/tmp\n"
    bwrapped.restart()
    assert "No such file" in bwrapped.run("cat /tmp/f").output  # every shell gets a fresh /tmp


def test_environment_user_files_and_host_processes_are_out_of_sight(
    bwrapped: BashSession, tmp_path: Path
) -> None:
    private = tmp_path / "home" / ".ssh"
    private.mkdir(parents=True)
    (private / "id_rsa").write_text("CANARY-KEY\n")
    output = bwrapped.run(f"env; cat {private}/id_rsa").output
    for value in SECRETS.values():
        assert value not in output
    assert "CANARY-KEY" not in output and "No such file" in output
    # Only the sandbox's own processes exist in its /proc: bwrap's init, the shell, ls.
    assert int(bwrapped.run("ls -d /proc/[0-9]* | wc -l").output) <= 4


def test_no_network_even_to_localhost(bwrapped: BashSession) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        port = server.getsockname()[1]
        result = bwrapped.run(f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")
        assert "connected" not in result.output and result.exit_code != 0
        with pytest.raises(BlockingIOError):
            server.accept()


def test_git_works_with_a_masked_config(bwrapped: BashSession) -> None:
    result = bwrapped.run("git log --oneline | wc -l; git ls-files; cat .git/config; git config -l")
    assert result.output.startswith("1\napp.py\ndocs/guide.md\n[core]\n")
    assert TOKEN not in result.output and "extraheader" not in result.output


def test_git_works_in_a_linked_worktree(repo: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(worktree), "-b", "topic")
    with BashSession(worktree, env={}, sandbox=_bwrap(worktree)) as bash:
        result = bash.run(
            "git log --oneline | wc -l; git status --short | wc -l; cat ../*/.git/config"
        )
        assert result.output.startswith("1\n0\n")
        assert TOKEN not in result.output


def test_limits_stop_fork_memory_and_file_bombs(repo: Path) -> None:
    limits = Limits(processes=30, address_space_mb=512, file_size_mb=1)
    counter = (
        'python3 -c "import os, time\nn = 0\ntry:\n    while n < 500:\n'
        "        if os.fork() == 0:\n            time.sleep(60); os._exit(0)\n        n += 1\n"
        "except OSError as e:\n    print(e)\nprint('forked', n)\""
    )
    with BashSession(repo, env={}, timeout=20, sandbox=_bwrap(repo, limits)) as bash:
        result = bash.run(counter)
        assert "Resource temporarily unavailable" in result.output
        assert int(result.output.split("forked ")[1]) < 30
        memory = bash.run("python3 -c 'bytearray(1 << 30)'")
        assert "MemoryError" in memory.output and memory.exit_code == 1
        outcome = handle_tool_call(bash, {"command": "head -c 2000000 /dev/zero > /tmp/big"})
        assert outcome.text.endswith(
            "[exit code: 153; a command hit the file size limit (SIGXFSZ)]"
        )


def test_timeout_and_close_kill_every_process_in_the_sandbox(repo: Path) -> None:
    marker = f"orch-review-test-{os.getpid()}-{time.monotonic_ns()}"
    # Long enough for a sandboxed shell to start and run the quick commands on a loaded
    # machine; the command that must time out hangs.
    with BashSession(repo, env={}, timeout=5, sandbox=_bwrap(repo)) as bash:
        escape = f"setsid bash -c 'exec -a {marker} sleep 1000'"  # leaves the process group
        bash.run(f"(exec -a {marker} sleep 1000) & {escape} &")
        assert _wait_for(marker, 2) == 2
        assert bash.run(f"exec -a {marker} sleep 1000").timed_out
        assert _wait_for(marker, 0) == 0
        bash.run(f"{escape} &")
        assert _wait_for(marker, 1) == 1
    assert _wait_for(marker, 0) == 0


def test_shells_launched_off_the_agents_threads_keep_running(
    repo: Path, host_env: dict[str, str]
) -> None:
    # bwrap's --die-with-parent follows the *thread* that started it: a shell launched by a
    # thread that then ends is killed under the agent. The session's starter threads live on.
    sandbox = _bwrap(repo)

    def agent(starter: ThreadPoolExecutor) -> list[str]:
        outputs = []
        for n in range(3):
            with BashSession(
                repo, env=host_env, timeout=20, sandbox=sandbox, starter=starter
            ) as bash:
                bash.start()
                outputs += [bash.run(f"echo {n}-first").output, bash.run("cat app.py").output]
        return outputs

    with ThreadPoolExecutor(2) as starter, ThreadPoolExecutor(8) as agents:
        results = list(agents.map(lambda _: agent(starter), range(8)))
    expected = [line for n in range(3) for line in (f"{n}-first\n", "print('hi')\n")]
    assert results == [expected] * 8
