"""Proofs with the job's own tools: go, the project's vitest and jest, and a virtual
environment holding the test dependencies, each shown read-only to a real sandbox
(bubblewrap and Landlock), through the same ProofRunner a review uses."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import git as gitpython
import pytest

from orch_review.engine.proofs.proof_run import ProofRunner, ProverReport
from orch_review.engine.shell.bash import BashSession
from orch_review.engine.shell.confinement import SandboxUnavailable
from orch_review.engine.shell.sandbox import Sandbox, resolve_sandbox
from orch_review.engine.shell.toolchains import exposure
from orch_review.findings.proof import Proof
from orch_review.findings.records import Finding, Severity
from tests.conftest import GitRepoFactory, git, run_setting, write
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers import run_cli, skip_without_bubblewrap
from tests.scripted import Concern, ReviewScript
from tests.scripted_prover import ProofTest, ProverScript

pytestmark = pytest.mark.slow

KINDS = ["bubblewrap", "landlock"]
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
# Where the tests of vitest and jest find a node_modules holding both (`npm install vitest
# jest` in that directory); without it they skip.
NODE_MODULES_VARIABLE = "ORCH_REVIEW_TEST_NODE_PROJECT"


@pytest.fixture
def shared() -> Iterator[Path]:
    """A directory any uid may enter (a sandbox run as root drops to an unused uid)."""
    path = Path(tempfile.mkdtemp(prefix="orch-review-toolchains-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _sandbox(kind: str, root: Path) -> Sandbox:
    try:
        return resolve_sandbox(kind, root, search_path=os.environ["PATH"])  # type: ignore[arg-type]
    except SandboxUnavailable as exc:
        pytest.skip(f"{kind} cannot run here: {exc}")


def _project(where: Path, base: dict[str, str], head: dict[str, str]) -> tuple[Path, str, str]:
    repo = where / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commits = []
    for files in (base, head):
        write(repo, files)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "change")
        commits.append(git(repo, "rev-parse", "HEAD").strip())
    return repo, commits[0], commits[1]


def _prove(
    kind: str,
    repo: Path,
    base: str,
    head: str,
    language: str,
    path: str,
    test: tuple[str, str],
    env: dict[str, str],
) -> Proof:
    runner = ProofRunner(gitpython.Repo(repo), head, base, _sandbox(kind, repo), env, timeout=120)
    found = runner.probe(language)
    assert found is not None, f"no {language} runner in the sandbox"
    finding = Finding(path, 1, 3, Severity.HIGH, "correctness", "wrong", "e", "c")
    return runner.prove(finding, ProverReport(*test), found)


# --- go ------------------------------------------------------------------------------------

GO_MOD = {"go.mod": "module example.com/shop\n\ngo 1.19\n"}
GO_FUNC = "package shop\n\nfunc Discount(price, percent float64) float64 {\n"
GO_BASE = GO_FUNC + "\treturn price - price*percent/100\n}\n"
GO_HEAD = GO_FUNC + "\treturn price * percent / 100\n}\n"
GO_TEST = (
    'package shop\n\nimport "testing"\n\nfunc TestTenPercentOff(t *testing.T) {\n'
    "\tif got := Discount(200, 10); got != 180 {\n"
    '\t\tt.Fatalf("Discount(200, 10) = %v", got)\n\t}\n}\n'
)


@pytest.fixture
def go_project(shared: Path) -> tuple[Path, str, str]:
    if shutil.which("go") is None:
        pytest.skip("go is not installed (the CI script installs golang-go)")
    existing = (
        'package shop\n\nimport "testing"\n\n'
        'func TestAlreadyBroken(t *testing.T) { t.Fatal("x") }\n'
    )
    return _project(
        shared,
        {**GO_MOD, "shop/shop.go": GO_BASE, "shop/old_test.go": existing},
        {"shop/shop.go": GO_HEAD},
    )


@pytest.mark.parametrize("kind", KINDS)
def test_a_go_test_that_fails_on_head_and_passes_on_the_base_proves(
    kind: str, go_project: tuple[Path, str, str]
) -> None:
    repo, base, head = go_project
    env = {"PATH": os.environ["PATH"]}
    proof = _prove(kind, repo, base, head, "go", "shop/shop.go", ("shop/d_test.go", GO_TEST), env)

    assert proof.status == "proven", proof
    assert proof.against == "base"
    assert proof.command == "cd shop && go test -json -count=1 -run '^(TestTenPercentOff)$' ."
    assert proof.head is not None and proof.head.exit_code == 1
    assert '"Action":"fail","Package":"example.com/shop/shop","Test":"TestTenPercentOff"' in (
        proof.head.output
    )
    # Only the new file's tests ran, not the package's failing one.
    assert "TestAlreadyBroken" not in proof.head.output
    assert not (repo / "shop" / "d_test.go").exists()


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (
            GO_TEST.replace("got != 180", 'got != "x"'),
            "did not fail with a test failure on head (exit 2)",
        ),
        (
            GO_TEST.replace(
                'import "testing"', 'import (\n\t"testing"\n\n\t"github.com/x/y"\n)'
            ).replace("if got", "y.Z()\n\tif got"),
            "no module named 'github.com/x/y'",
        ),
        (GO_TEST.replace("180", "20"), "the test passes on head"),
    ],
    ids=["build-error", "missing-module", "passes-on-head"],
)
def test_a_go_test_that_does_not_build_or_passes_proves_nothing(
    go_project: tuple[Path, str, str], code: str, reason: str
) -> None:
    repo, base, head = go_project
    env = {"PATH": os.environ["PATH"]}
    proof = _prove(
        "bubblewrap", repo, base, head, "go", "shop/shop.go", ("shop/d_test.go", code), env
    )

    assert proof.status == "not-proven"
    assert reason in proof.reason


# --- vitest and jest -----------------------------------------------------------------------


@pytest.fixture
def node_project() -> Path:
    where = run_setting(NODE_MODULES_VARIABLE)
    if not where or not Path(where, "node_modules", ".bin", "vitest").exists():
        pytest.skip(
            f"set {NODE_MODULES_VARIABLE} to a directory where `npm install vitest jest` ran "
            "(installing them takes about 50 s, too long for every CI run)"
        )
    return Path(where)


JS_EXPORT = "}\nmodule.exports = { discount }\n"
JS_BASE = (
    "function discount(price, percent) {\n  return price - price * percent / 100\n" + JS_EXPORT
)
JS_HEAD = "function discount(price, percent) {\n  return price * percent / 100\n" + JS_EXPORT
JS_TEST = (
    "const { discount } = require('../src/shop')\n\ntest('ten percent off', () => {\n"
    "  expect(discount(200, 10)).toBe(180)\n})\n"
)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("tool", ["vitest", "jest"])
def test_the_projects_vitest_or_jest_proves(
    kind: str, tool: str, shared: Path, node_project: Path
) -> None:
    package = '{"name": "shop", "private": true}\n'
    test = JS_TEST
    if tool == "vitest":
        test = "import { test, expect } from 'vitest'\n" + test.replace(
            "const { discount } = require('../src/shop')", "import { discount } from '../src/shop'"
        )
    else:  # node_modules has both: the project's package.json says which it uses
        package = '{"name": "shop", "private": true, "devDependencies": {"jest": "*"}}\n'
    repo, base, head = _project(
        shared, {"package.json": package, "src/shop.js": JS_BASE}, {"src/shop.js": JS_HEAD}
    )
    # As a job installs them: node_modules in the working tree, not in git.
    (repo / "node_modules").symlink_to(node_project / "node_modules")
    env = {"PATH": os.environ["PATH"]}

    proof = _prove(
        kind, repo, base, head, "javascript", "src/shop.js", ("test/shop.test.js", test), env
    )

    assert proof.status == "proven", proof
    assert proof.command is not None and proof.command.startswith(f"node_modules/.bin/{tool} ")
    assert proof.head is not None and '"numFailedTests":1' in proof.head.output


# --- a virtual environment -----------------------------------------------------------------

APP_BASE = "from tinydep import fee\n\n\ndef total(price):\n    return price + fee()\n"
APP_HEAD = "from tinydep import fee\n\n\ndef total(price):\n    return price - fee()\n"
APP_TEST = (
    "import unittest\n\nfrom app import total\n\n\nclass Total(unittest.TestCase):\n"
    "    def test_fee_is_added(self):\n        self.assertEqual(total(10), 12)\n"
)


def _venv(where: Path) -> Path:
    """A virtual environment (no pip: fast) with ``tinydep`` installed only there."""
    venv = where / "venv"
    # The system's interpreter where there is one: a root-run Landlock sandbox's uid cannot
    # enter an interpreter installed under /root (pyenv), and the test's venv would not work.
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "tinydep").mkdir()
    (site / "tinydep" / "__init__.py").write_text("def fee():\n    return 2\n")
    return venv


def _venv_env(venv: Path, **more: str) -> dict[str, str]:
    return {"PATH": f"{venv}/bin:{SYSTEM_PATH}", "VIRTUAL_ENV": str(venv), **more}


@pytest.fixture
def python_project(shared: Path) -> tuple[Path, str, str]:
    return _project(shared, {"app.py": APP_BASE}, {"app.py": APP_HEAD})


@pytest.mark.parametrize("kind", KINDS)
def test_a_dependency_installed_only_in_the_active_venv_is_there_for_the_proof(
    kind: str, shared: Path, python_project: tuple[Path, str, str]
) -> None:
    repo, base, head = python_project
    venv = _venv(shared)
    test = ("test_total.py", APP_TEST)

    proof = _prove(kind, repo, base, head, "python", "app.py", test, _venv_env(venv))
    without = _prove(kind, repo, base, head, "python", "app.py", test, {"PATH": SYSTEM_PATH})

    assert proof.status == "proven", proof
    assert without.status == "not-proven"
    assert "no module named 'tinydep'" in without.reason


@pytest.mark.parametrize("kind", KINDS)
def test_the_shell_finds_the_venvs_python_first_and_cannot_write_into_it(
    kind: str, shared: Path, python_project: tuple[Path, str, str]
) -> None:
    repo, _, _ = python_project
    venv = _venv(shared)
    before = sorted(str(p) for p in venv.rglob("*"))
    sandbox = _sandbox(kind, repo)
    with BashSession(repo, env=_venv_env(venv), timeout=30, sandbox=sandbox.launcher) as shell:
        found = shell.run("command -v python3; python3 -c 'import sys, tinydep; print(sys.prefix)'")
        writes = shell.run(
            f"touch {venv}/new; echo x >> {venv}/bin/activate; mkdir {venv}/lib/d; "
            f"rm {venv}/pyvenv.cfg; echo done"
        )

    assert found.output.splitlines() == [f"{venv}/bin/python3", str(venv)]
    assert (
        writes.output.count("Read-only file system") + writes.output.count("Permission denied") == 4
    ), writes.output
    assert sorted(str(p) for p in venv.rglob("*")) == before


@pytest.mark.parametrize("kind", KINDS)
def test_a_venv_under_home_shows_only_the_venv(
    kind: str, shared: Path, python_project: tuple[Path, str, str]
) -> None:
    repo, _, _ = python_project
    home = shared / "home"
    write(home, {".ssh/id_ed25519": "PRIVATE-KEY\n", ".netrc": "password SECRET\n", "notes": "N\n"})
    venv = _venv(home)
    sandbox = _sandbox(kind, repo)
    env = _venv_env(venv, HOME=str(home))
    with BashSession(repo, env=env, timeout=30, sandbox=sandbox.launcher) as shell:
        seen = shell.run(
            f"python3 -c 'import tinydep; print(\"venv ok\")'; ls -a {home}; "
            f"cat {home}/.ssh/id_ed25519 {home}/.netrc {home}/notes"
        )

    said = seen.output.splitlines()
    assert said[0] == "venv ok", seen.output
    # bubblewrap shows the directories leading to the venv, with nothing else in them;
    # Landlock refuses to list them.
    listing = said[1:4] if said[1] == "." else said[1:2]
    assert listing in (
        [".", "..", "venv"],
        [f"ls: cannot open directory '{home}': Permission denied"],
    ), seen.output
    for secret in ("PRIVATE-KEY", "SECRET", "N"):
        assert secret not in said, seen.output
    assert (
        seen.output.count("No such file or directory") + seen.output.count("Permission denied") >= 3
    )


@pytest.mark.parametrize("kind", KINDS)
def test_a_venv_holding_credentials_is_not_shown_and_the_proof_says_so(
    kind: str, shared: Path, python_project: tuple[Path, str, str]
) -> None:
    repo, base, head = python_project
    venv = _venv(shared)
    write(venv, {".docker/config.json": '{"auths": {}}\n'})

    proof = _prove(
        kind, repo, base, head, "python", "app.py", ("test_t.py", APP_TEST), _venv_env(venv)
    )

    assert proof.status == "not-proven"
    assert "no module named 'tinydep'" in proof.reason
    assert f"{venv} was not shown to the sandbox: it holds .docker" in proof.reason


def test_the_running_venvs_pytest_is_the_proofs_runner(
    shared: Path, python_project: tuple[Path, str, str]
) -> None:
    if sys.prefix == sys.base_prefix:
        pytest.skip("the tests do not run in a virtual environment")
    repo, base, head = python_project
    env = {"PATH": f"{sys.prefix}/bin:{SYSTEM_PATH}", "VIRTUAL_ENV": sys.prefix}
    runner = ProofRunner(gitpython.Repo(repo), head, base, _sandbox("bubblewrap", repo), env)

    assert runner.probe("python") is not None
    assert runner.probe("python").name == "pytest"  # type: ignore[union-attr]


# --- what is shown -------------------------------------------------------------------------


def test_what_is_shown_and_what_never_is(shared: Path) -> None:
    home = shared / "home"
    write(home, {".ssh/config": "", "bin/pyenv-like-shim/python3": "#!/bin/sh\n"})
    compiled = [home / "tools/node/bin/node", shared / "opt/go/bin/go", home / "bin/python"]
    for program in compiled:
        program.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy("/bin/true", program)
    shim = home / "bin/pyenv-like-shim/python3"
    shim.chmod(0o755)
    env = {
        "HOME": str(home),
        "PATH": ":".join(
            [str(shim.parent), *(str(p.parent) for p in compiled), "rel/bin", "/usr/bin"]
        ),
    }

    shown = exposure(env)

    # node's prefix under home is shown, and go's; not the home (python's prefix), nor /usr,
    # nor a script outside a virtual environment (a shim that would shadow the real python3).
    assert shown.paths == (home / "tools/node", shared / "opt/go")
    assert shown.refused == (f"{home} was not shown to the sandbox: it holds the home directory",)


def test_a_review_proves_a_go_finding_and_the_proof_replays(
    fake_api: FakeMessagesAPI, api_env: dict[str, str], git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    if shutil.which("go") is None:
        pytest.skip("go is not installed (the CI script installs golang-go)")
    repo = git_repo({**GO_MOD, "shop/shop.go": GO_BASE})
    skip_without_bubblewrap(repo)
    write(repo, {"shop/shop.go": GO_HEAD})
    concern = Concern(
        "Discount",
        "Check Discount in shop/shop.go for a wrong formula.",
        "grep -n 'return price \\* percent' shop/shop.go",
        path="shop/shop.go",
        claim="Discount returns the discount instead of the discounted price.",
    )
    fake_api.policy = ProverScript(
        ReviewScript([concern]), {"discount": ProofTest("shop/discount_test.go", GO_TEST)}
    )

    result = run_cli(repo, api_env, "--json", "-", "--no-progress", "--prove", timeout=300)

    assert result.returncode == 1, result.stderr
    [finding] = json.loads(result.stdout)["findings"]
    proof = finding["proof"]
    assert proof["status"] == "proven", proof
    assert proof["fixed"]["against"] == "base"
    # Anyone can replay it: the test in a copy of head fails, and passes on the base.
    for content, status in ((GO_HEAD, 1), (GO_BASE, 0)):
        copy = tmp_path / f"replay{status}"
        shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".git"))
        write(copy, {proof["test_path"]: proof["test_code"], "shop/shop.go": content})
        home = tmp_path / f"home{status}"
        home.mkdir()
        done = subprocess.run(
            ["bash", "-c", proof["command"]],
            cwd=copy,
            env={"PATH": "/usr/bin:/bin", "HOME": str(home), "GOPROXY": "off"},
            capture_output=True,
            timeout=120,
        )
        assert done.returncode == status, done.stdout


@pytest.mark.parametrize("kind", KINDS)
def test_a_typescript_finding_is_proven_with_vitest(
    kind: str, shared: Path, node_project: Path
) -> None:
    source = "export function discount(price: number, percent: number): number {\n"
    repo, base, head = _project(
        shared,
        {
            "package.json": '{"name": "shop", "type": "module"}\n',
            "src/shop.ts": source + "  return price - price * percent / 100\n}\n",
        },
        {"src/shop.ts": source + "  return price * percent / 100\n}\n"},
    )
    (repo / "node_modules").symlink_to(node_project / "node_modules")
    test = (
        "import { test, expect } from 'vitest'\nimport { discount } from '../src/shop'\n\n"
        "test('ten percent off', () => {\n  expect(discount(200, 10)).toBe(180)\n})\n"
    )
    env = {"PATH": os.environ["PATH"]}

    proof = _prove(
        kind, repo, base, head, "typescript", "src/shop.ts", ("test/shop.test.ts", test), env
    )

    assert proof.status == "proven", proof
    assert proof.command == "node_modules/.bin/vitest run --reporter=json test/shop.test.ts"


@pytest.mark.parametrize("kind", KINDS)
def test_node_starts_in_the_sandbox(kind: str, python_project: tuple[Path, str, str]) -> None:
    # Debian's node refuses to start when it may not read /etc/ssl/openssl.cnf.
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    repo, _, _ = python_project
    sandbox = _sandbox(kind, repo)
    with BashSession(repo, env={"PATH": SYSTEM_PATH}, timeout=30, sandbox=sandbox.launcher) as sh:
        said = sh.run("node -e 'console.log(6 * 7)'")

    assert said.output == "42\n"


def _module_cache(where: Path) -> Path:
    """A Go module cache holding example.com/dep v1.0.0, filled by `go mod download` from a
    proxy in files (no network)."""
    proxy = where / "proxy" / "example.com" / "dep" / "@v"
    proxy.mkdir(parents=True)
    module = "module example.com/dep\n\ngo 1.19\n"
    with zipfile.ZipFile(proxy / "v1.0.0.zip", "w") as archive:
        archive.writestr("example.com/dep@v1.0.0/go.mod", module)
        archive.writestr(
            "example.com/dep@v1.0.0/dep.go", "package dep\n\nfunc Fee() float64 { return 2 }\n"
        )
    (proxy / "v1.0.0.mod").write_text(module)
    (proxy / "list").write_text("v1.0.0\n")
    (proxy / "v1.0.0.info").write_text('{"Version":"v1.0.0","Time":"2024-01-01T00:00:00Z"}\n')
    cache = where / "gopath" / "pkg" / "mod"
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(where),
        "GOPATH": str(where / "gopath"),
        "GOCACHE": str(where / "gocache"),
        "GOPROXY": f"file://{where / 'proxy'}",
        "GOSUMDB": "off",
    }
    subprocess.run(
        ["go", "mod", "download", "example.com/dep@v1.0.0"],
        cwd=where,
        env=env,
        check=True,
        capture_output=True,
    )
    for directory in (where, where / "gopath", where / "gopath" / "pkg"):
        directory.chmod(0o755)
    return cache


# What `go mod tidy` writes for the module _module_cache makes.
GO_SUM = (
    "example.com/dep v1.0.0 h1:QikB9d8PqtRmnj2P8gLLCNOsHePRqtFJ0KNuwaf4bfA=\n"
    "example.com/dep v1.0.0/go.mod h1:fGPp69Hit/toBUWE+Ldh2b+Bo3ABzILGe56XIcOE/Is=\n"
)


@pytest.mark.parametrize("kind", KINDS)
def test_go_reads_dependencies_from_the_jobs_module_cache(
    kind: str, shared: Path, go_project: tuple[Path, str, str]
) -> None:
    cache = _module_cache(shared / "job")
    app = (
        'package app\n\nimport "example.com/dep"\n\n'
        "func Total(p float64) float64 { return p %s dep.Fee() }\n"
    )
    (shared / "app").mkdir()
    repo, base, head = _project(
        shared / "app",
        {
            "go.mod": "module example.com/app\n\ngo 1.19\n\nrequire example.com/dep v1.0.0\n",
            "go.sum": GO_SUM,
            "app.go": app % "+",
        },
        {"app.go": app % "-"},
    )
    test = (
        "app_test.go",
        'package app\n\nimport "testing"\n\nfunc TestFee(t *testing.T) {\n'
        '\tif Total(10) != 12 {\n\t\tt.Fatal("no fee")\n\t}\n}\n',
    )
    with_cache = {"PATH": os.environ["PATH"], "GOMODCACHE": str(cache)}

    proof = _prove(kind, repo, base, head, "go", "app.go", test, with_cache)
    without = _prove(kind, repo, base, head, "go", "app.go", test, {"PATH": os.environ["PATH"]})

    assert proof.status == "proven", proof
    assert without.status == "not-proven"
    assert "no module named 'example.com/dep'" in without.reason
