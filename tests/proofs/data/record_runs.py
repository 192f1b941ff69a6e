"""Records what real vitest, jest and go test runs print, for tests/proofs/test_runner_outputs.py.

Usage: python tests/proofs/data/record_runs.py NODE_PROJECT > tests/proofs/data/runs.json

NODE_PROJECT is a directory where `npm install vitest jest` was run; go comes from PATH.
Each case is one test file run alone, with the command orch-review uses, from the root of a
small project in a temporary directory, stdout and stderr together as a shell shows them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from orch_review.engine.proofs.runners import GO_ENVIRONMENT, Runner

VITEST = "import { test, expect } from 'vitest'\n"
JS_CASES = {
    "fails": "test('adds', () => { expect(1 + 1).toBe(3) })\n",
    "throws": "test('adds', () => { throw new TypeError('boom') })\n",
    "passes": "test('adds', () => { expect(1 + 1).toBe(2) })\n",
    "syntax": "test('adds', () => { expect(1 + 1).toBe(2)\n",
    "import": "import x from 'not-installed-anywhere'\ntest('adds', () => {})\n",
    "no-tests": "const x = 1\n",
}
GO_HEAD = 'package shop\n\nimport "testing"\n\n'


def _go_test(body: str, head: str = GO_HEAD) -> str:
    return head + "func TestD(t *testing.T) {\n" + body + "}\n"


GO_CASES = {
    "fails": _go_test('\tif Discount(200, 10) != 180 {\n\t\tt.Fatal("wrong")\n\t}\n'),
    "panics": _go_test('\tvar m map[string]int\n\tm["a"] = 1\n'),
    "passes": _go_test('\tif Discount(200, 10) != 20 {\n\t\tt.Fatal("wrong")\n\t}\n'),
    "compile": _go_test('\tif Discount(200, 10) != "x" {\n\t}\n'),
    "vet": _go_test('\tt.Errorf("%d", "s")\n'),
    "import": _go_test(
        "\tassert.Equal(t, 1, 2)\n",
        'package shop\n\nimport (\n\t"testing"\n\n\t"github.com/stretchr/testify/assert"\n)\n\n',
    ),
    "no-tests": "package shop\n\nfunc helper() {}\n",
    "other-package": _go_test('\tt.Fatal("x")\n', 'package other\n\nimport "testing"\n\n'),
}


def run(root: Path, command: str) -> dict[str, object]:
    env = {"PATH": os.environ["PATH"], "HOME": str(root / ".home"), "LANG": "C.UTF-8"}
    (root / ".home").mkdir(exist_ok=True)
    done = subprocess.run(
        ["bash", "-c", command + " 2>&1"], cwd=root, env=env, capture_output=True, timeout=300
    )
    return {"exit_code": done.returncode, "output": done.stdout.decode("utf-8", "replace")}


def main(node_project: Path) -> None:
    runs: list[dict[str, object]] = []
    for name in ("vitest", "jest"):
        for case, code in JS_CASES.items():
            with tempfile.TemporaryDirectory() as tmp:
                root = Path(tmp)
                (root / "package.json").write_text('{"name": "shop", "type": "module"}\n')
                if name == "jest":  # jest loads CommonJS without a transform configured
                    (root / "package.json").write_text('{"name": "shop"}\n')
                    code = code.replace(
                        "import x from 'not-installed-anywhere'",
                        "require('not-installed-anywhere')",
                    )
                (root / "node_modules").symlink_to(node_project.resolve() / "node_modules")
                path = "src/shop.test.js"
                (root / "src").mkdir()
                (root / path).write_text((VITEST if name == "vitest" else "") + code)
                command = Runner(name).command(path)
                runs.append(
                    {"runner": name, "case": case, "command": command, **run(root, command)}
                )
    for case, code in GO_CASES.items():
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / "go.mod").write_text("module example.com/shop\n\ngo 1.19\n")
            (root / "shop").mkdir()
            (root / "shop" / "shop.go").write_text(
                "package shop\n\nfunc Discount(price, percent float64) float64 {\n"
                "\treturn price * percent / 100\n}\n"
            )
            path = "shop/discount_test.go"
            (root / path).write_text(code)
            command = Runner("go").command(path, code)
            runs.append(
                {
                    "runner": "go",
                    "case": case,
                    "command": command,
                    **run(root, GO_ENVIRONMENT + command),
                }
            )
    json.dump(runs, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
