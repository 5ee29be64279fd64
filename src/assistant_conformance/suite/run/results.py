"""A run's result: built from its tests' records at its end (`of_run`), kept in `results.json`
beside its reports (`kept`, `save`), and, for a run split in shards, built again from every
shard's records (`merge`: `assistant-conformance merge DIR...`). A merge decides the verdicts
again over all the shards' tests and findings with the same `build` (not a vote of the shards'
verdicts), applies the baseline once, and its exit status is that of one run.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import pytest

from assistant_conformance.contract import catalogue, files
from assistant_conformance.report import redact, write_all
from assistant_conformance.report.baseline import BaselineEntry
from assistant_conformance.report.model import (
    NOT_PROBED,
    UNSUPPORTED_GROUP,
    GroupJson,
    GroupStatus,
    ResultJson,
    Run,
    TestResult,
)
from assistant_conformance.report.verdicts import build
from assistant_conformance.suite.config.run_folder import Measurements
from assistant_conformance.suite.evidence import har
from assistant_conformance.suite.http import absent
from assistant_conformance.suite.run import identity, stats
from assistant_conformance.suite.run.state import COLLECTED, RunStart, run_setup, target_found
from assistant_conformance.suite.safety import removal

if TYPE_CHECKING:
    from assistant_conformance.suite.config.settings import SuiteSettings

RESULTS = "results.json"
RESULTS_FORMAT = "assistant-conformance-results/1"
SAME = ("suite_version", "suite_sha256", "spec", "target", "seed", "examples", "strict")
COPIED = (har.FOLDER, "allure-results")


class ShardMergeError(ValueError):
    """Shards that cannot be merged; the message is one line."""


def of_run(config: pytest.Config, started: RunStart, measured: Measurements) -> Run:
    """This run's verdicts, from its tests' records and what its processes measured."""
    setup, found, collector = run_setup(config), target_found(config), config.stash[COLLECTED]
    settings = setup.settings
    return build(
        catalogue.load(),
        collector.results,
        info={
            **identity.run_info(settings, started.at, time.monotonic() - started.clock),
            "runs": stats.runs_summary(measured),
            "transport": stats.transport_summary(setup.policy, measured),
            "workers": int(getattr(config.option, "numprocesses", None) or 1),
            "invocation": "assistant-conformance run"
            if config.inipath == files.pytest_ini()
            else "pytest",
            **(
                {"cleanup": removal.cleanup_summary(done).model_dump(mode="json")}
                if (done := measured.get(stats.CLEANUP))
                else {}
            ),
            "absent_operations": lacking(measured, found.capabilities),
        },
        capabilities=found.capabilities,
        baseline=setup.baseline,
        baseline_file=str(settings.baseline or ""),
        unattributed=collector.unattributed,
    )


def lacking(measured: Measurements, groups: dict[str, GroupStatus]) -> list[dict[str, str]]:
    """The operations found absent (suite/http/absent.py), but those of a group unsupported
    whole."""
    unsupported = {g for g, s in groups.items() if s.status == UNSUPPORTED_GROUP}
    return absent.absent_summary(measured.get(stats.ABSENT), unsupported)


class BaselineJson(TypedDict):
    reason: str
    expires: str | None


class ResultsFile(TypedDict):
    """results.json: what a run keeps for a merge of shards (`merge_record`), read back by
    `merge`."""

    format: str
    finished: bool
    identity: dict[str, object]  # what the shards of one run share (SAME)
    info: dict[str, Any]  # the run's (report/model.py: Run.info)
    tests: list[ResultJson]
    measured: dict[str, list[Any]]  # Measurements.as_dict
    capabilities: dict[str, GroupJson]
    baseline: dict[str, BaselineJson]
    unattributed: list[str]
    shard: str | None  # `I/N`, set as it is saved (None: a run in one piece)


def save_results(record: ResultsFile, settings: SuiteSettings) -> None:
    shard = str(settings.shard) if settings.shard else None
    text = json.dumps(redact.redacted({**record, "shard": shard}), default=str)
    (settings.report_dir / RESULTS).write_text(text, encoding="utf-8")


def merge_record(
    run: Run, tests: list[TestResult], measured: Measurements, ended: bool
) -> ResultsFile:
    """What a run keeps for a merge: its identity, its tests' records and what it measured."""
    options = run.info["options"]
    return {
        "format": RESULTS_FORMAT,
        "finished": ended,
        "identity": {
            **{k: run.info[k] for k in ("suite_version", "suite_sha256", "spec", "target", "seed")},
            "examples": options["examples"],
            "strict": options["strict_conformance"],
        },
        "info": run.info,
        "tests": [t.as_json() for t in tests],
        "measured": measured.as_dict(),
        "capabilities": {g: s.as_dict() for g, s in run.capabilities.items()},
        "baseline": {
            b.requirement: {"reason": b.reason, "expires": b.expires} for b in run.baseline
        },
        "unattributed": run.unattributed,
        "shard": None,
    }


def merge(folders: list[Path], out: Path) -> Run:
    parts = [_load(folder) for folder in folders]
    _check(parts, folders)
    tests = [TestResult.of_json(t) for part in parts for t in part["tests"]]
    measured = Measurements()
    for part in parts:
        measured = measured.joined(part["measured"])
    first = parts[0]
    run = build(
        catalogue.load(),
        tests,
        info=_info(parts, measured, out),
        capabilities=_capabilities(parts),
        baseline={rid: _entry(rid, e) for rid, e in first["baseline"].items()},
        baseline_file=first["info"]["options"].get("baseline") or "",
        unattributed=[n for part in parts for n in part["unattributed"]],
    )
    write_all(run, out)
    _junit(folders, out)
    for name in COPIED:
        for folder in folders:
            if (folder / name).is_dir():
                shutil.copytree(folder / name, out / name, dirs_exist_ok=True)
    return run


def _load(folder: Path) -> ResultsFile:
    path = folder / RESULTS
    if not path.is_file():
        raise ShardMergeError(f"{folder}: no {RESULTS}: not the report folder of a finished run")
    try:
        part = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        raise ShardMergeError(f"{path}: not JSON") from None
    if part.get("format") != RESULTS_FORMAT:
        raise ShardMergeError(f"{path}: not a {RESULTS_FORMAT} file")
    if not part["finished"]:
        raise ShardMergeError(
            f"{folder}: its run did not finish (interrupted): run that shard again"
        )
    if not part["shard"]:
        raise ShardMergeError(f"{folder}: a whole run, not a shard (run with --shard I/N)")
    return part


def _check(parts: list[ResultsFile], folders: list[Path]) -> None:
    first = parts[0]["identity"]
    for part, folder in zip(parts[1:], folders[1:], strict=True):
        for name in SAME:
            if part["identity"][name] != first[name]:
                raise ShardMergeError(
                    f"{folder}: another {name} ({part['identity'][name]!r}) than {folders[0]} "
                    f"({first[name]!r}): one run's shards share seed, depth, spec, suite and target"
                )
    shards = [str(p["shard"]) for p in parts]  # each given (`_load`)
    counts = {int(shard.split("/")[1]) for shard in shards}
    if len(counts) > 1:
        raise ShardMergeError(f"shards of different splits: {sorted(shards)}")
    count = counts.pop()
    given: dict[int, Path] = {}
    for shard, folder in zip(shards, folders, strict=True):
        index = int(shard.split("/")[0])
        if index in given:
            raise ShardMergeError(f"shard {index}/{count} given twice: {given[index]} and {folder}")
        given[index] = folder
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in given]
    if missing:
        raise ShardMergeError(
            f"shard(s) {', '.join(missing)} missing: give every shard's report folder"
        )


def _entry(rid: str, entry: BaselineJson) -> BaselineEntry:
    expires = dt.date.fromisoformat(entry["expires"]) if entry["expires"] else None
    return BaselineEntry(rid, entry["reason"], expires)


def _capabilities(parts: list[ResultsFile]) -> dict[str, GroupStatus]:
    """Each group as the shards that looked at it saw it (declared or probed beats not probed)."""
    merged: dict[str, GroupStatus] = {}
    for part in parts:
        for group, status in part["capabilities"].items():
            if group not in merged or merged[group].status == NOT_PROBED:
                merged[group] = GroupStatus.of_json(status)
    return merged


def _info(parts: list[ResultsFile], measured: Measurements, out: Path) -> dict[str, Any]:
    infos = [p["info"] for p in parts]
    return {
        **infos[0],
        "started": min(i["started"] for i in infos),
        "duration_seconds": max(i["duration_seconds"] for i in infos),
        "peak_memory_mib": max(i["peak_memory_mib"] for i in infos),
        "options": {**infos[0]["options"], "report_dir": str(out)},
        "runs": stats.runs_summary(measured),
        "transport": {**infos[0]["transport"], **stats.transport_counts(measured)},
        "workers": sum(i["workers"] for i in infos),
        "invocation": "assistant-conformance merge",
        "shards": len(parts),
        "absent_operations": lacking(measured, _capabilities(parts)),
        **(
            {"cleanup": removal.cleanup_summary(done).model_dump(mode="json")}
            if (done := measured.get(stats.CLEANUP))
            else {}
        ),
    }


def _junit(folders: list[Path], out: Path) -> None:
    """One testsuite holding every shard's test cases, its counts summed."""
    merged = ET.Element("testsuites")
    suite = ET.SubElement(merged, "testsuite", name="assistant-conformance")
    counts = dict.fromkeys(("tests", "errors", "failures", "skipped"), 0)
    seconds = 0.0
    for folder in folders:
        path = folder / "junit.xml"
        if not path.is_file():
            continue
        for shard_suite in ET.parse(path).getroot().iter("testsuite"):
            for name in counts:
                counts[name] += int(shard_suite.get(name, "0"))
            seconds = max(seconds, float(shard_suite.get("time", "0")))
            suite.extend(shard_suite.findall("testcase"))
    suite.attrib.update({name: str(n) for name, n in counts.items()}, time=f"{seconds:.3f}")
    ET.ElementTree(merged).write(out / "junit.xml", encoding="utf-8", xml_declaration=True)
