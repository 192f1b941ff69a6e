"""Merging shard reports: coverage summed, concerns renumbered, findings once, gaps loud."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from orch_review.findings.merge import merge_files, missing_shards, read_shard
from orch_review.reporters import json_report
from tests.reporters.sample import clean_report, sample_report


def _write(path: Path, report: object) -> Path:
    path.write_text(json_report.render(report), encoding="utf-8")  # type: ignore[arg-type]
    return path


def test_a_report_survives_the_json_round_trip(tmp_path: Path) -> None:
    original = replace(sample_report(), snippets={})
    back = json_report.to_data(read_shard(_write(tmp_path / "r.json", original)).report)
    data = json_report.to_data(original)
    # A concern's finding count comes back as the findings that name it after deduplication.
    for concerns in (back["concerns"], data["concerns"]):
        for concern in concerns:
            concern.pop("findings")
    assert back == data


def test_shards_merge_into_one_complete_report(tmp_path: Path) -> None:
    one = replace(clean_report(), shard="1/2", findings=sample_report().findings[:1])
    two = replace(clean_report(), shard="2/2", findings=sample_report().findings[:1])
    merged = merge_files([_write(tmp_path / "a.json", one), _write(tmp_path / "b.json", two)])

    assert len(merged.findings) == 1  # the same fingerprint in both: reported once
    assert [c.index for c in merged.concerns] == [0, 1]
    assert merged.usage.total.requests == 2 * one.usage.total.requests
    assert merged.coverage is not None and not merged.incomplete
    assert merged.exit_code("high").value == 1


def test_a_missing_or_broken_shard_makes_the_merge_incomplete(tmp_path: Path) -> None:
    one = _write(tmp_path / "a.json", replace(clean_report(), shard="1/3"))
    broken = tmp_path / "b.json"
    broken.write_text("{not json")

    merged = merge_files([one, broken])

    assert merged.incomplete and merged.exit_code("never").value == 3
    notes = merged.coverage.notes if merged.coverage else ()
    assert any("b.json" in n for n in notes)
    assert "shard 2/3 produced no report" in notes and "shard 3/3 produced no report" in notes
    assert missing_shards([read_shard(one)]) == ["2/3", "3/3"]
    assert json.loads(json_report.render(merged))["incomplete"] is True
