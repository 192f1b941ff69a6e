"""``--format junit``: JUnit XML, for CI systems that show test reports (Jenkins, Azure
Pipelines, GitLab's test report widget, ``artifacts:reports:junit``).

The shape is Apache Ant's JUnit output as its published XSD describes it
(github.com/windyroad/JUnit-Schema): ``testsuites`` holding one ``testsuite`` named
orch-review, with one ``testcase`` per file in scope. A file with confirmed findings
fails (one ``failure`` listing them, typed by the most severe); a file no verified review
covered is an ``error``; a skipped file (binary, too large, ...) is ``skipped`` with its
reason; a covered file without findings passes.

Every ``testcase`` also carries ``file`` (the repository-relative path), and a failing one
``line`` (its most severe finding's): GitLab's unit test report shows ``file`` with each test case
(docs.gitlab.com/ci/testing/unit_test_reports/), as pytest's ``xunit1`` family writes them;
Ant's XSD has neither attribute, and consumers that follow it ignore them.

Element text keeps its newlines, so wherever the XML is printed to a CI log a line of it
could be a runner command: no line starts one (see :class:`orch_review.sanitize.CommandSafeStream`).
"""

from __future__ import annotations

import io
import platform
import re
import time
import xml.etree.ElementTree as ET
from collections import defaultdict

from orch_review.findings.records import Finding, Severity
from orch_review.findings.report import Report
from orch_review.findings.snippets import cap_lines
from orch_review.quoting import path_for_text
from orch_review.reporters.sentences import incomplete_reasons
from orch_review.reporters.text import machine_text
from orch_review.sanitize import CommandSafeStream

# What XML 1.0 cannot carry at all, even escaped (controls() already shows the C0 ones).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value: str) -> str:
    out = io.StringIO()
    CommandSafeStream(out).write(machine_text(value))
    return _NOT_XML.sub("\ufffd", out.getvalue())


def _classname(path: str) -> str:
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    return "orch-review" + ("." + folder.replace("/", ".") if folder else "")


def _failure(findings: list[Finding]) -> tuple[str, str, str]:
    worst = min(findings, key=lambda f: list(Severity).index(f.severity)).severity
    noun = "finding" if len(findings) == 1 else "findings"
    message = f"{len(findings)} confirmed {noun}, the most severe {worst.value}"
    body = "\n\n".join(
        f"{f.severity.value.upper()} {f.category} at lines {f.start_line}-{f.end_line}: "
        f"{f.claim.strip()}\nEvidence: {f.evidence.strip()}"
        for f in findings
    )
    return message, worst.value, cap_lines(body)


def to_xml(report: Report, *, timestamp: str | None = None, hostname: str | None = None) -> str:
    """The report as JUnit XML (``timestamp`` and ``hostname`` default to now and here)."""
    by_path: dict[str, list[Finding]] = defaultdict(list)
    for finding in report.confirmed:
        by_path[finding.path].append(finding)
    coverage = report.coverage
    reviewed = {f.path: f for f in coverage.files} if coverage is not None else {}
    skipped = {s.path: s.reason for s in coverage.skipped} if coverage is not None else {}
    paths = sorted(set(reviewed) | set(skipped) | set(by_path))
    counts = {"failures": 0, "errors": 0, "skipped": 0}
    cases = []
    for path in paths:
        case = ET.Element(
            "testcase",
            name=_text(path_for_text(path)),
            classname=_text(_classname(path_for_text(path))),
            time="0",
            file=_text(path_for_text(path)),
        )
        if path in by_path:
            case.set("line", str(max(1, by_path[path][0].start_line)))
            message, kind, body = _failure(by_path[path])
            ET.SubElement(case, "failure", message=_text(message), type=kind).text = _text(body)
            counts["failures"] += 1
        elif path in reviewed and reviewed[path].status == "uncovered":
            reason = reviewed[path].reason or "no verified review covered it"
            error = ET.SubElement(case, "error", message=_text(f"not reviewed: {reason}"))
            error.set("type", "not-covered")
            counts["errors"] += 1
        elif path in skipped:
            ET.SubElement(case, "skipped", message=_text(skipped[path]))
            counts["skipped"] += 1
        cases.append(case)
    root = ET.Element("testsuites")
    suite = ET.SubElement(
        root,
        "testsuite",
        name="orch-review",
        package="orch-review",
        id="0",
        timestamp=timestamp or time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()),
        hostname=hostname or platform.node() or "localhost",
        tests=str(len(cases)),
        failures=str(counts["failures"]),
        errors=str(counts["errors"]),
        skipped=str(counts["skipped"]),
        time=f"{report.wall_seconds:.3f}",
    )
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="scope", value=_text(report.scope))
    ET.SubElement(properties, "property", name="model", value=_text(report.model or "-"))
    suite.extend(cases)
    notes = [*incomplete_reasons(report), *report.notes]
    ET.SubElement(suite, "system-out").text = _text("\n".join(notes))
    ET.SubElement(suite, "system-err").text = ""
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def render(report: Report) -> str:
    """The JUnit XML document."""
    return to_xml(report)
