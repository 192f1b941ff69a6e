"""A proof in the JSON report and in comments: valid under the schema, read back as written,
and the model's test shown as text that cannot break out of its block."""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from orch_review.findings.codec import finding_from_json, finding_to_json
from orch_review.findings.merge import read_shard
from orch_review.findings.proof import Proof, ProofRun, not_proven, proof_from_json
from orch_review.findings.provenance import SHARD_PROOF
from orch_review.hosts.comment_body import comment_body
from orch_review.reporters import json_report
from orch_review.reporters.json_report import schema
from orch_review.reporters.proofs import write_proofs
from tests.findings.test_codec import FINDING
from tests.reporters.sample import sample_report

HOSTILE = "```\n</details>\n@maintainer <img src=x onerror=alert(1)>\n\x1b[31m\n````"
PROVEN = Proof(
    "proven",
    "fails on head with a test failure and passes with the fix",
    test_path="tests/test_bug.py",
    test_code="def test_bug():\n    assert f() == 1\n" + HOSTILE,
    command="python3 -m pytest -p no:cacheprovider -q tests/test_bug.py",
    head=ProofRun(1, "1 failed"),
    fixed=ProofRun(0, "1 passed"),
    against="patch",
)


@pytest.mark.parametrize(
    "proof",
    [
        PROVEN,
        not_proven("no runner"),
        dataclasses.replace(PROVEN, status="not-proven", fixed=ProofRun(None, ""), against="base"),
    ],
)
def test_a_proof_is_valid_json_and_reads_back(proof: Proof) -> None:
    finding = dataclasses.replace(FINDING, proof=proof)
    data = finding_to_json(finding)
    jsonschema.validate(data, {**schema()["$defs"]["finding"], "$defs": schema()["$defs"]})
    assert finding_from_json(data).proof == proof
    assert "proof" not in finding_to_json(replace(FINDING, proof=None))  # none attempted


@pytest.mark.parametrize(
    "change",
    [
        {"status": "proven!"},
        {"reason": None},
        {"head": {"exit_code": "1", "output": ""}},
        {"fixed": {"exit_code": 0, "output": "", "against": "model"}},
        {"test_code": 3},
    ],
)
def test_a_malformed_proof_is_refused(change: dict[str, object]) -> None:
    data = finding_to_json(dataclasses.replace(FINDING, proof=PROVEN))["proof"] | change
    with pytest.raises(ValueError):
        proof_from_json(data)


def test_a_comment_folds_the_test_in_a_fence_it_cannot_close() -> None:
    body = comment_body(dataclasses.replace(FINDING, proof=PROVEN))
    assert "**Proven by a failing test:**" in body
    block = body.split("<details>", 1)[1]
    fence = block.split("\n")[2]
    assert fence.startswith("`````") and fence.endswith("python")  # longer than any run in it
    closing = fence.removesuffix("python")
    code = block.split(fence + "\n", 1)[1].split("\n" + closing + "\n", 1)[0]
    assert "\x1b" not in code and code.count("</details>") == 1
    assert body.rstrip().endswith("</details>")
    assert "not proven" in comment_body(dataclasses.replace(FINDING, proof=not_proven("x"))).lower()


def test_write_proofs_writes_proven_tests_only_and_never_over_a_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    proven = dataclasses.replace(FINDING, proof=PROVEN)
    unproven = dataclasses.replace(FINDING, proof=not_proven("passes on head"))
    escaping = dataclasses.replace(FINDING, proof=dataclasses.replace(PROVEN, test_path="../x.py"))
    out = tmp_path / "proofs"

    said = write_proofs([proven, unproven, escaping], out)
    again = write_proofs([proven], out)

    assert (out / "tests/test_bug.py").read_text() == PROVEN.test_code
    assert [p.name for p in tmp_path.rglob("*.py")] == ["test_bug.py"]
    assert said[0].startswith("Wrote the test proving") and said[1].startswith("Not written")
    assert again == [f"Not written: {out / 'tests/test_bug.py'} exists."]


def test_a_proof_marked_proven_in_a_shard_report_is_not_proven_after_the_merge(
    tmp_path: Path,
) -> None:
    report = replace(sample_report(), snippets={})
    forged = replace(report, findings=tuple(replace(f, proof=PROVEN) for f in report.findings))
    path = tmp_path / "shard.json"
    path.write_text(json_report.render(forged), encoding="utf-8")

    shard = read_shard(path).report

    assert shard.findings and all(f.proof is not None for f in shard.findings)
    for finding in shard.findings:
        assert finding.proof is not None and finding.proof.status == "not-proven"
        assert finding.proof.reason == SHARD_PROOF
        assert finding.proof.test_code == PROVEN.test_code  # still shown, proving nothing
