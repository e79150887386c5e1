"""Where a finished run's time went: its jobs' Snakemake benchmark files summed per rule.

Every timed rule writes ``results/<run>/benchmarks/<rule folder>/...tsv`` (wall seconds, CPU
seconds, peak memory of the job's process tree). This prints, per folder (``predict``,
``score``, ``imagenet-c``, ``curves``, ...): jobs, wall seconds in all, per job (mean and
largest), CPU seconds, the largest resident memory; with ``--against`` a second run's figures
side by side and the ratio. The machine goes with the figures: CPU model, ISA extensions, and
any variable that caps the ISA the libraries use (an AVX2-only CPU emulated on an AVX-512 one).

    python benchmarks/bench_job_costs.py results/demo
    # the default run as an AVX2-only CPU runs it (oneDNN in torch and OpenVINO, ATen's kernels,
    # numpy's dispatch), against the same run on the full ISA:
    ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 \\
        NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" \\
        snakemake --cores 2 --config run=demo-avx2
    python benchmarks/bench_job_costs.py results/demo-avx2 --against results/demo

The ISA variables of the run are not recorded in its files: state them with ``--isa`` (printed
with the table), e.g. ``--isa "AVX2 (emulated: ONEDNN_MAX_CPU_ISA=AVX2 ...)"``.

Rules without a benchmark file (samples, rates, figures, the summary: short Python processes)
are seen only in Snakemake's own log of the run: ``--log .snakemake/log/<time>.snakemake.log``
adds a second table, every job's wall time per rule from the log's start and finish stamps
(whole seconds, so a job shorter than a second can count 0 or 1), the run's span, and the jobs
that started but did not finish. Every invocation writes its own log: give the one of the run
to measure (the newest is the last invocation, which may be a later re-run of a few jobs):

    ls -t .snakemake/log/   # the run's log: its "Job stats" list the run's jobs
    python benchmarks/bench_job_costs.py results/demo --log .snakemake/log/<time>.snakemake.log
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import sys
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from bench_output import emit, machine  # noqa: E402

ISA_VARIABLES = ("ONEDNN_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY", "NPY_DISABLE_CPU_FEATURES")


def rule_costs(run: Path) -> dict[str, dict[str, float]]:
    """Per benchmark folder of ``run``: jobs, wall and CPU seconds, mean and largest job (s),
    largest resident memory (MB)."""
    folder = run / "benchmarks"
    if not folder.is_dir():
        raise SystemExit(f"{folder} does not exist: give the folder of a finished run "
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
    for line in log.read_text().splitlines():
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
        raise SystemExit(f"{log} has no finished jobs: give Snakemake's log of the run "
                         "(.snakemake/log/<time>.snakemake.log)")
    return dict(costs), (last - first).total_seconds(), len(started)


def log_table(costs: dict, span: float, unfinished: int = 0) -> list[str]:
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


def table(costs: dict, other: dict | None) -> list[str]:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run", type=Path, help="results/<run> of a finished run")
    parser.add_argument("--against", type=Path, help="a second run, side by side")
    parser.add_argument("--isa", default="", help="what ISA the run used, when it was capped")
    parser.add_argument("--log", type=Path,
                        help="Snakemake's log of the run: every job's wall time per rule")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    costs = rule_costs(args.run)
    other = rule_costs(args.against) if args.against else None
    capped = {v: os.environ[v] for v in ISA_VARIABLES if v in os.environ}
    lines = [f"`{args.run}`" + (f" against `{args.against}`" if args.against else "")
             + f"; machine: {json.dumps(machine(torch.device('cpu')))}"
             + (f"; run's ISA: {args.isa}" if args.isa else "")
             + (f"; ISA variables now: {capped}" if capped else ""), ""]
    lines += table(costs, other)
    lines += ["", "Wall seconds are summed over jobs (two jobs at a time on 2 cores: the run's "
              "wall time is about half). Each job's time includes its start-up (Python, torch)."]
    if args.log:
        lines += ["", f"Every job, from Snakemake's log `{args.log}` (whole seconds):", ""]
        lines += log_table(*log_costs(args.log))
    emit("\n".join(lines), args.out)


if __name__ == "__main__":
    main()
