"""Where a finished run's time went: its jobs' Snakemake benchmark files summed per rule folder,
and every job's wall time per rule from Snakemake's own log (``vcrbench job-costs``).

Every timed rule writes ``results/<run>/benchmarks/<rule folder>/...tsv`` (wall seconds, CPU
seconds, peak memory of the job's process tree): :func:`rule_costs` sums them per folder.
Rules without a benchmark file (samples, rates, figures, the summary: short Python processes)
are seen only in Snakemake's log of the run (``.snakemake/log/<time>.snakemake.log``):
:func:`log_costs` reads every job's start and finish stamps there (whole seconds, so a job
shorter than a second counts 0 or 1). :func:`job_costs_report` is the Markdown of both, with
the machine (:func:`vcrbench.host.machine`, passed in) and the ISA variables in force.
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections import defaultdict
from datetime import datetime
from pathlib import Path

from vcrbench.errors import VcrbenchError

#: The variables that cap the instruction set the libraries use (``vcrbench.host`` names the
#: same three; core imports nothing above it).
ISA_VARIABLES = ("ONEDNN_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY", "NPY_DISABLE_CPU_FEATURES")


def rule_costs(run: Path) -> dict[str, dict[str, float]]:
    """Per benchmark folder of ``run``: jobs, wall and CPU seconds, mean and largest job (s),
    largest resident memory (MB)."""
    folder = Path(run) / "benchmarks"
    if not folder.is_dir():
        raise VcrbenchError(f"{folder} does not exist: give the folder of a finished run "
                            "(results/<run>)")
    costs: dict[str, dict[str, float]] = defaultdict(lambda: {"jobs": 0, "wall_s": 0.0,
                                                              "cpu_s": 0.0, "max_s": 0.0,
                                                              "max_rss_mb": 0.0})
    for tsv in sorted(folder.rglob("*.tsv")):
        rule = tsv.relative_to(folder).parts[0].removesuffix(".tsv")
        with tsv.open() as handle:
            rows = list(csv.DictReader(handle, delimiter="\t"))
        for row in rows[-1:]:  # a re-run job appends: its last row is the run that counted
            entry = costs[rule]
            seconds = float(row["s"])
            entry["jobs"] += 1
            entry["wall_s"] += seconds
            entry["cpu_s"] += float(row.get("cpu_time") or 0.0)
            entry["max_s"] = max(entry["max_s"], seconds)
            entry["max_rss_mb"] = max(entry["max_rss_mb"], float(row.get("max_rss") or 0.0))
    return dict(costs)


#: Snakemake's log: a time stamp line, then the line that starts or finishes a job.
_STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
_START = re.compile(r"^(?:local)?(?:rule|checkpoint) (\S+):$")
_JOBID = re.compile(r"^\s+jobid: (\d+)$")
_FINISH = re.compile(r"^Finished jobid: (\d+) \(Rule: (\S+)\)$")


def log_costs(log: Path) -> tuple[dict[str, dict[str, float]], float, int]:
    """Per rule of a Snakemake log: jobs, wall seconds in all, mean and largest job (s), from the
    start and finish stamps of every finished job; the span from the first job's start to the
    last one's finish (s); and how many jobs started without finishing (failed or cut off)."""
    started: dict[str, tuple[str, datetime]] = {}
    costs: dict[str, dict[str, float]] = defaultdict(lambda: {"jobs": 0, "wall_s": 0.0,
                                                              "max_s": 0.0})
    stamp = rule = None
    first = last = None
    for line in Path(log).read_text().splitlines():
        if m := _STAMP.match(line):
            stamp = datetime.strptime(m.group(1), "%a %b %d %H:%M:%S %Y")
        elif (m := _START.match(line)) and stamp is not None:
            rule = (m.group(1), stamp)
        elif (m := _JOBID.match(line)) and rule is not None:
            started[m.group(1)] = rule
            first = first or rule[1]
            rule = None
        elif (m := _FINISH.match(line)) and m.group(1) in started and stamp is not None:
            name, begun = started.pop(m.group(1))
            seconds = (stamp - begun).total_seconds()
            entry = costs[name]
            entry["jobs"] += 1
            entry["wall_s"] += seconds
            entry["max_s"] = max(entry["max_s"], seconds)
            last = stamp
    if not costs:
        raise VcrbenchError(f"{log} has no finished jobs: give Snakemake's log of the run "
                            "(.snakemake/log/<time>.snakemake.log)")
    return dict(costs), (last - first).total_seconds(), len(started)


def log_table(costs: dict, span: float, unfinished: int = 0) -> list[str]:
    """Markdown lines of :func:`log_costs`: per rule, largest wall time first, then the span."""
    lines = ["| rule | jobs | wall s | s / job | largest job s |", "|---|---:|---:|---:|---:|"]
    for name in sorted(costs, key=lambda r: -costs[r]["wall_s"]):
        c = costs[name]
        lines.append(f"| {name} | {c['jobs']} | {c['wall_s']:.0f} | "
                     f"{c['wall_s'] / c['jobs']:.1f} | {c['max_s']:.0f} |")
    lines.append(f"| every rule | {sum(c['jobs'] for c in costs.values())} | "  # not "all":
                 f"{sum(c['wall_s'] for c in costs.values()):.0f} | | |")  # a rule's name
    return [*lines, "", f"From the first job's start to the last job's finish: {span:.0f} s."
            + (f" {unfinished} job(s) started without finishing (not counted)." if unfinished
               else "")]


def costs_table(costs: dict, other: dict | None) -> list[str]:
    """Markdown lines of :func:`rule_costs`, largest wall time first; with ``other`` (a second
    run's) its wall seconds side by side and the ratio."""
    head = "| rule folder | jobs | wall s | s / job | largest job s | CPU s | largest RSS MB |"
    rule = "|---|---:|---:|---:|---:|---:|---:|"
    if other is not None:
        head += " wall s (against) | ratio |"
        rule += "---:|---:|"
    lines = [head, rule]
    total = {"wall_s": 0.0, "other": 0.0}
    for name in sorted(costs, key=lambda r: -costs[r]["wall_s"]):
        c = costs[name]
        total["wall_s"] += c["wall_s"]
        line = (f"| {name} | {c['jobs']} | {c['wall_s']:.0f} | {c['wall_s'] / c['jobs']:.1f} | "
                f"{c['max_s']:.1f} | {c['cpu_s']:.0f} | {c['max_rss_mb']:.0f} |")
        if other is not None:
            o = other.get(name)
            if o:
                total["other"] += o["wall_s"]
                line += f" {o['wall_s']:.0f} | {c['wall_s'] / o['wall_s']:.2f} |"
            else:
                line += " — | — |"
        lines.append(line)
    footer = f"| all | {sum(c['jobs'] for c in costs.values())} | {total['wall_s']:.0f} | | | | |"
    if other is not None and total["other"]:
        footer += f" {total['other']:.0f} | {total['wall_s'] / total['other']:.2f} |"
    lines.append(footer)
    return lines


def job_costs_report(run: Path, machine: dict, *, against: Path | None = None, isa: str = "",
                     log: Path | None = None) -> str:
    """The Markdown report: the run (and ``against``) with ``machine`` and the ISA it ran with,
    the benchmark files' table, and with ``log`` every job's wall time from Snakemake's log."""
    costs = rule_costs(run)
    other = rule_costs(against) if against else None
    capped = {v: os.environ[v] for v in ISA_VARIABLES if v in os.environ}
    lines = [f"`{run}`" + (f" against `{against}`" if against else "")
             + f"; machine: {json.dumps(machine)}"
             + (f"; run's ISA: {isa}" if isa else "")
             + (f"; ISA variables now: {capped}" if capped else ""), ""]
    lines += costs_table(costs, other)
    lines += ["", "Wall seconds are summed over jobs (two jobs at a time on 2 cores: the run's "
              "wall time is about half). Each job's time includes its start-up (Python, torch)."]
    if log:
        lines += ["", f"Every job, from Snakemake's log `{log}` (whole seconds):", ""]
        lines += log_table(*log_costs(log))
    return "\n".join(lines)
