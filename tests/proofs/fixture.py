"""The proof fixture: a change with a logic bug in a changed function, `eval` in a new
function, and a comment that only looks like a bug; a scripted review that confirms all three
and a scripted prover with a test for each."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import GitRepoFactory, git, write
from tests.scripted import Concern, ReviewScript
from tests.scripted_prover import ProofTest, ProverScript

BASE = {
    "shop.py": (
        "def discount(price, percent):\n"
        "    return price - price * percent / 100\n"
        "\n"
        "\n"
        "def ratio(total, count):\n"
        "    if count == 0:\n"
        "        return 0.0\n"
        "    return total / count\n"
    ),
    "README.md": "# shop\n",
}
HEAD = {
    "shop.py": (
        "def discount(price, percent):\n"
        "    return price * percent / 100\n"
        "\n"
        "\n"
        "def ratio(total, count):\n"
        "    # BUG? count may be zero here\n"
        "    if count == 0:\n"
        "        return 0.0\n"
        "    return total / count\n"
        "\n"
        "\n"
        "def evaluate(expression):\n"
        "    return eval(expression)\n"
    ),
}

UNITTEST = "import unittest\n\n"
DISCOUNT_TEST = ProofTest(
    "tests/test_discount.py",
    UNITTEST + "from shop import discount\n\n\n"
    "class Discount(unittest.TestCase):\n"
    "    def test_ten_percent_off(self):\n"
    "        self.assertEqual(discount(200, 10), 180)\n",
)
EVAL_TEST = ProofTest(
    "tests/test_evaluate.py",
    UNITTEST + "from shop import evaluate\n\n\n"
    "class Evaluate(unittest.TestCase):\n"
    "    def test_code_is_not_run(self):\n"
    "        with self.assertRaises(ValueError):\n"
    "            evaluate(\"__import__('os').name\")\n",
)
# The honest test of the comment: the guard holds, so it passes on head.
RATIO_TEST = ProofTest(
    "tests/test_ratio.py",
    UNITTEST + "from shop import ratio\n\n\n"
    "class Ratio(unittest.TestCase):\n"
    "    def test_zero_count(self):\n"
    "        self.assertEqual(ratio(1, 0), 0.0)\n",
)

DISCOUNT = Concern(
    "discount",
    "Check discount() in shop.py for a wrong formula.",
    "grep -n 'return price \\* percent' shop.py",
    path="shop.py",
    claim="discount() returns the discount instead of the discounted price.",
    search={"pattern": "return price * percent", "fixed_string": True, "path": "shop.py"},
    replacement=lambda text: text.replace("price * percent / 100", "price - price * percent / 100"),
)
EVALUATE = Concern(
    "evaluate",
    "Check evaluate() in shop.py for code execution.",
    "grep -n 'eval(expression)' shop.py",
    path="shop.py",
    category="security",
    claim="evaluate() runs eval on its input: arbitrary code execution.",
    replacement=lambda text: text.replace("eval(", "__import__('ast').literal_eval("),
)
RATIO = Concern(
    "zero",
    "Check ratio() in shop.py for division by zero.",
    "grep -n 'BUG?' shop.py",
    path="shop.py",
    claim="ratio() may divide by zero.",
)


def shop_repo(git_repo: GitRepoFactory) -> Path:
    """The base committed on main, the change in the working tree."""
    repo = git_repo(BASE)
    write(repo, HEAD)
    return repo


def shop_script(tests: dict[str, ProofTest] | None = None, *more: Concern) -> ProverScript:
    """The review of the change (and ``more`` concerns), with the fixture's tests (those of
    ``tests`` instead, by a word of the claim)."""
    chosen = {"returns the discount": DISCOUNT_TEST, "eval": EVAL_TEST, "divide": RATIO_TEST}
    chosen.update(tests or {})
    return ProverScript(ReviewScript([DISCOUNT, EVALUATE, RATIO, *more]), chosen)


def tree_state(repo: Path) -> dict[str, bytes]:
    """Every file of the working tree but .git, with its bytes."""
    return {
        str(p.relative_to(repo)): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(repo).parts
    } | {"<status>": git(repo, "status", "--porcelain", "--ignored").encode()}
