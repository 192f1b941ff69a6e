"""The persistent bash session behind the bash tool, driven with real shells in tmp_path."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from orch_review.engine.shell.bash import (
    BASH_TOOL,
    BashSession,
    ShellLaunch,
    format_result,
    handle_tool_call,
)

# Every test here starts a shell or an orch-review subprocess.
pytestmark = pytest.mark.slow

# Session timeout of tests where one command must time out and the others must not.
QUICK_COMMANDS_BOUND = 3


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {"PATH": os.environ["PATH"], "HOME": str(home), "LC_ALL": "C.UTF-8"}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    return root


@pytest.fixture
def session(repo: Path, env: dict[str, str]) -> Iterator[BashSession]:
    with BashSession(repo, env=env, timeout=60) as bash:  # an upper bound: nothing here hangs
        yield bash


def _gone(pid: int) -> bool:
    """True once ``pid`` no longer runs (a zombie waiting for init to reap it counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def _wait_gone(pid: int) -> bool:
    # SIGKILL is delivered asynchronously; give the kernel a moment, then decide (an upper
    # bound for a loaded machine: a process that is gone returns at once).
    deadline = time.monotonic() + 30
    while not _gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_tool_definition() -> None:
    assert BASH_TOOL == {"type": "bash_20250124", "name": "bash"}


def test_cwd_and_variables_persist(session: BashSession, repo: Path) -> None:
    assert session.run("cd sub").exit_code == 0
    assert session.run("pwd").output == f"{repo / 'sub'}\n"
    session.run("export GREETING=hello; PLAIN=world")
    assert session.run('echo "$GREETING $PLAIN"').output == "hello world\n"


def test_stderr_is_captured(session: BashSession) -> None:
    result = session.run("echo out; echo err >&2")
    assert result.output == "out\nerr\n"
    assert result.exit_code == 0


def test_non_zero_exit_code_is_reported(session: BashSession) -> None:
    result = session.run("false")
    assert (result.exit_code, result.timed_out) == (1, False)
    assert session.run("echo still here").output == "still here\n"


def test_exit_ends_the_shell_and_the_next_command_gets_a_fresh_one(
    session: BashSession, repo: Path
) -> None:
    session.run("cd sub; export GONE=1")
    result = session.run("echo bye; exit 3")
    assert result.exit_code == 3
    assert result.output.startswith("bye\n")
    assert "shell exited with code 3" in result.output
    assert session.run('pwd; echo "[$GONE]"').output == f"{repo}\n[]\n"


def test_exit_is_noticed_while_a_background_job_holds_the_pipe(session: BashSession) -> None:
    result = session.run("sleep 1000 & echo $!; exit 4")
    assert result.exit_code == 4
    assert not result.timed_out
    assert _wait_gone(int(result.output.split()[0]))


def test_timeout_kills_the_group_and_the_next_command_starts_fresh(
    repo: Path, env: dict[str, str]
) -> None:
    # The timeout must fire on a hang, and hold for the quick commands around it (a fresh
    # shell's start included) on a loaded machine: a few seconds, not one.
    with BashSession(repo, env=env, timeout=QUICK_COMMANDS_BOUND) as bash:
        background = int(bash.run("cd sub; sleep 1000 & echo $!").output)
        result = bash.run("echo started; sleep 100")
        assert result.timed_out
        assert result.exit_code is None
        assert result.output.startswith("started\n")
        assert "command timed out after 3 s; the shell was restarted" in result.output
        assert _wait_gone(background)
        assert bash.run("pwd").output == f"{repo}\n"


def test_long_output_keeps_head_and_tail(session: BashSession) -> None:
    result = session.run("seq 1 20000")
    assert result.truncated
    assert len(result.output) <= 8000
    assert result.output.startswith("1\n2\n3\n")
    assert result.output.endswith("19999\n20000\n")
    assert "characters omitted; narrow the command" in result.output
    assert "grep" in result.output


def test_yes_piped_to_head_is_truncated(session: BashSession) -> None:
    result = session.run("yes | head -c 100000")
    assert result.truncated and result.exit_code == 0
    assert result.output.startswith("y\ny\n") and result.output.endswith("y\ny\n")
    head, rest = result.output.split("\n[... ", 1)
    omitted, rest = rest.split(" characters omitted", 1)
    tail = rest.split(" ...]\n", 1)[1]
    assert len(head) + int(omitted) + len(tail) == 100000
    assert len(result.output) <= 8000


def test_endless_output_is_bounded_until_the_timeout(repo: Path, env: dict[str, str]) -> None:
    with BashSession(repo, env=env, timeout=QUICK_COMMANDS_BOUND, output_cap=2000) as bash:
        # Endless, but paced (at most 100 kB/s): it reaches the timeout long before the
        # 4,000,000 bytes that would stop it as runaway output, however fast the machine.
        result = bash.run("while :; do printf 'y\\n%.0s' {1..500}; sleep 0.01; done")
        assert result.timed_out and result.truncated
        assert len(result.output) <= 2000
        assert result.output.startswith("y\ny\n")
        assert bash.run("echo ok").output == "ok\n"


def test_runaway_output_is_stopped_long_before_the_timeout(repo: Path, env: dict[str, str]) -> None:
    with BashSession(repo, env=env, timeout=600, output_cap=2000) as bash:
        bash.run("cd sub; export KEPT=1")
        outcome = handle_tool_call(bash, {"command": "head -c 1000000000 /dev/zero | tr '\\0' y"})
        assert outcome.is_error
        assert len(outcome.text) <= 2000
        assert outcome.text.startswith("yyyy")
        assert "printed more than 4,000,000 bytes and was stopped" in outcome.text
        assert bash.run('pwd; echo "[$KEPT]"').output == f"{repo}\n[]\n"  # a fresh shell


def test_a_resource_limit_signal_is_named(session: BashSession) -> None:
    text = format_result(session.run("bash -c 'kill -XFSZ $$'"))
    assert text.endswith("[exit code: 153; a command hit the file size limit (SIGXFSZ)]")


def test_commands_read_dev_null_not_the_protocol_pipe(session: BashSession) -> None:
    assert session.run("cat").output == ""
    assert session.run('read line; echo "got [$line] $?"').output == "got [] 1\n"
    assert session.run("echo next").output == "next\n"


def test_output_without_trailing_newline(session: BashSession) -> None:
    assert session.run("printf abc").output == "abc"
    assert session.run("printf 'two\\n\\n'").output == "two\n\n"


def test_unicode_and_invalid_utf8(session: BashSession) -> None:
    assert session.run("echo 'héllo ✓ 日本'").output == "héllo ✓ 日本\n"
    # Bytes that are not UTF-8 are kept, written as git writes them in a name: a file
    # called b"bad\xff.py" that ls prints is one the model can name back.
    assert session.run("printf 'a\\xff\\xfeb\\n'").output == "a\\377\\376b\n"


def test_quotes_heredocs_and_syntax_errors(session: BashSession) -> None:
    assert session.run("echo 'it'\"'\"'s'; echo \"$((1 + 2))\"").output == "it's\n3\n"
    assert session.run("cat <<'EOF'\n$HOME 'x'\nEOF").output == "$HOME 'x'\n"
    broken = session.run("if then '")
    assert broken.exit_code == 2 and "syntax error" in broken.output
    assert session.run("echo fine").output == "fine\n"


def test_restart_resets_cwd_and_variables(session: BashSession, repo: Path) -> None:
    session.run("cd sub; export KEPT=1")
    assert "restarted" in session.restart()
    assert session.run('pwd; echo "[$KEPT]"').output == f"{repo}\n[]\n"


def test_close_kills_background_jobs(repo: Path, env: dict[str, str]) -> None:
    bash = BashSession(repo, env=env, timeout=60)
    pid = int(bash.run("sleep 1000 & echo $!").output)
    assert not _gone(pid)
    bash.close()
    assert _wait_gone(pid)
    bash.close()  # closing twice is harmless


def test_a_fake_sentinel_in_the_output_is_just_output(session: BashSession) -> None:
    fake = "__ORCH_REVIEW_DONE_" + "0" * 32
    result = session.run(f"echo; echo '{fake} 0'; printf '\\n%s 7\\n' {fake}; echo after; false")
    assert result.output == f"\n{fake} 0\n\n{fake} 7\nafter\n"
    assert result.exit_code == 1


def test_tracing_does_not_end_the_command_early(session: BashSession) -> None:
    session.run("set -x")
    result = session.run("echo traced")
    assert "traced\n" in result.output and result.exit_code == 0
    session.run("set +x")
    assert session.run("echo plain").output == "plain\n"


def test_many_sessions_in_parallel_do_not_mix(repo: Path, env: dict[str, str]) -> None:
    def worker(n: int) -> list[str]:
        with BashSession(repo, env=env, timeout=30) as bash:
            bash.run(f"export WORKER={n}")
            return [bash.run(f'echo "$WORKER:{i}"; echo "e{i}" >&2').output for i in range(20)]

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(worker, range(8)))
    for n, outputs in enumerate(results):
        assert outputs == [f"{n}:{i}\ne{i}\n" for i in range(20)]


def test_constructor_rejects_nonsense(repo: Path, env: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="timeout"):
        BashSession(repo, env=env, timeout=0)
    with pytest.raises(ValueError, match="output_cap"):
        BashSession(repo, env=env, output_cap=10)


def test_launcher_prefixes_the_command_line(repo: Path, env: dict[str, str]) -> None:
    with BashSession(repo, env=env, launcher=["env", "MARK=launched"]) as bash:
        assert bash.run('echo "$MARK"').output == "launched\n"


class RecordingLauncher:
    """A ShellLauncher that marks each shell and records when its cleanup runs."""

    def __init__(self) -> None:
        self.launched = 0
        self.cleaned = 0

    def launch(self, cwd: Path, env: Mapping[str, str], shell: Sequence[str]) -> ShellLaunch:
        self.launched += 1

        def cleanup() -> None:
            self.cleaned += 1

        marked = {**env, "SHELL_NUMBER": str(self.launched)}
        return ShellLaunch(tuple(shell), marked, cwd / "sub", cleanup=cleanup)


def test_sandbox_starts_each_shell_and_cleans_up_after_it(repo: Path, env: dict[str, str]) -> None:
    launcher = RecordingLauncher()
    with BashSession(repo, env=env, sandbox=launcher) as bash:
        assert bash.run('pwd; echo "$SHELL_NUMBER"').output == f"{repo / 'sub'}\n1\n"
        assert (launcher.launched, launcher.cleaned) == (1, 0)
        bash.restart()
        assert launcher.cleaned == 1
        assert bash.run('echo "$SHELL_NUMBER"').output == "2\n"
    assert (launcher.launched, launcher.cleaned) == (2, 2)


def test_launcher_and_sandbox_are_exclusive(repo: Path, env: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="not both"):
        BashSession(repo, env=env, launcher=["env"], sandbox=RecordingLauncher())


# handle_tool_call


def test_tool_call_runs_the_command(session: BashSession) -> None:
    outcome = handle_tool_call(session, {"command": "echo hi"})
    assert (outcome.text, outcome.is_error) == ("hi\n", False)


def test_tool_call_reports_exit_code_without_error(session: BashSession) -> None:
    outcome = handle_tool_call(session, {"command": "grep -r nothing-here ."})
    assert (outcome.text, outcome.is_error) == ("(no output)\n[exit code: 1]", False)
    outcome = handle_tool_call(session, {"command": "printf partial; exit 5"})
    assert outcome.text.startswith("partial\n[the shell exited with code 5")
    assert outcome.text.endswith("\n[exit code: 5]")


def test_tool_call_empty_output(session: BashSession) -> None:
    assert handle_tool_call(session, {"command": "true"}).text == "(no output)"


def test_tool_call_timeout_is_an_error(repo: Path, env: dict[str, str]) -> None:
    with BashSession(repo, env=env, timeout=1) as bash:
        outcome = handle_tool_call(bash, {"command": "sleep 100"})
        assert outcome.is_error
        assert "timed out after 1 s" in outcome.text


@pytest.mark.parametrize(
    "tool_input",
    [{}, {"command": ""}, {"command": "   "}, {"command": 3}, {"restart": False}],
)
def test_tool_call_invalid_input(session: BashSession, tool_input: dict[str, object]) -> None:
    outcome = handle_tool_call(session, tool_input)
    assert outcome.is_error
    assert '"command"' in outcome.text


def test_tool_call_restart(session: BashSession, repo: Path) -> None:
    session.run("cd sub")
    outcome = handle_tool_call(session, {"restart": True})
    assert not outcome.is_error and "restarted" in outcome.text
    assert session.run("pwd").output == f"{repo}\n"
    both = handle_tool_call(session, {"restart": True, "command": "pwd"})
    assert both.text.endswith(f"\n{repo}\n")


def test_format_result_separates_exit_code_from_unterminated_output(
    session: BashSession,
) -> None:
    assert format_result(session.run("printf x; false")) == "x\n[exit code: 1]"


def test_shell_functions_named_like_the_protocol_do_not_break_it(session: BashSession) -> None:
    session.run("printf() { echo hijacked; }; eval() { echo hijacked; }")
    assert session.run("echo ok").output == "ok\n"


def test_bash_env_is_not_sourced(tmp_path: Path, repo: Path, env: dict[str, str]) -> None:
    startup = tmp_path / "startup.sh"
    startup.write_text("echo sourced\n")
    with BashSession(repo, env={**env, "BASH_ENV": str(startup)}) as bash:
        assert bash.run("echo ok").output == "ok\n"
