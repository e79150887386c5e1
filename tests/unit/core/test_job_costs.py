"""``vcrbench job-costs`` (:mod:`vcrbench.core.job_costs`): a Snakemake log read into every
finished job's wall time per rule from its start and finish stamps, jobs left unfinished left
out; the benchmark files summed per rule folder against hand sums."""

from __future__ import annotations

import pytest

from vcrbench.core.job_costs import (
    costs_table,
    job_costs_report,
    log_costs,
    log_table,
    rule_costs,
)
from vcrbench.errors import VcrbenchError

LOG = """\
Building DAG of jobs...
Select jobs to execute...
Execute 2 jobs...

[Fri Nov 27 13:50:34 2026]
localrule index:
    output: results/x/data/index.parquet
    jobid: 4
Shell command: None

[Fri Nov 27 13:50:34 2026]
rule score:
    jobid: 7
    wildcards: corruption=fog
[Fri Nov 27 13:50:36 2026]
Finished jobid: 4 (Rule: index)
1 of 3 steps (33%) done
Select jobs to execute...
Execute 1 jobs...

[Fri Nov 27 13:50:36 2026]
localrule index:
    jobid: 5
Shell command: None
[Fri Nov 27 13:51:00 2026]
Finished jobid: 7 (Rule: score)
2 of 3 steps (67%) done
[Fri Nov 27 13:51:01 2026]
Finished jobid: 5 (Rule: index)
3 of 3 steps (100%) done
[Fri Nov 27 13:51:02 2026]
rule curves:
    jobid: 9
"""


def test_every_finished_job_counts_once(tmp_path):
    log = tmp_path / "run.snakemake.log"
    log.write_text(LOG)
    costs, span, unfinished = log_costs(log)
    assert costs == {"index": {"jobs": 2, "wall_s": 2.0 + 25.0, "max_s": 25.0},
                     "score": {"jobs": 1, "wall_s": 26.0, "max_s": 26.0}}
    assert span == 27.0  # 13:50:34 to 13:51:01; the unfinished curves job is not counted
    assert unfinished == 1
    text = "\n".join(log_table(costs, span, unfinished))
    assert "1 job(s) started without finishing" in text
    assert "| index | 2 | 27 | 13.5 | 25 |" in text and "| every rule | 3 | 53 | | |" in text


def test_a_log_without_finished_jobs_is_refused(tmp_path):
    log = tmp_path / "empty.log"
    log.write_text("Building DAG of jobs...\n")
    with pytest.raises(VcrbenchError, match="no finished jobs"):
        log_costs(log)


HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _benchmark(path, *rows: tuple[float, float, float]) -> None:
    """A Snakemake benchmark file of (wall s, max_rss MB, cpu s) rows."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + "".join(f"{s}\t0:00:00\t{rss}\t0\t0\t0\t0\t0\t0\t{cpu}\n"
                                     for s, rss, cpu in rows))


def test_benchmark_files_sum_per_rule_folder_last_row_counting(tmp_path):
    run = tmp_path / "results" / "a"
    _benchmark(run / "benchmarks" / "predict" / "m1" / "fog.tsv", (10.0, 300.0, 9.0))
    # a re-run appends a row: only the last one counts
    _benchmark(run / "benchmarks" / "predict" / "m2" / "fog.tsv", (99.0, 1.0, 1.0),
               (30.0, 500.0, 20.0))
    _benchmark(run / "benchmarks" / "index.tsv", (2.0, 50.0, 1.5))
    costs = rule_costs(run)
    assert costs == {
        "predict": {"jobs": 2, "wall_s": 40.0, "cpu_s": 29.0, "max_s": 30.0,
                    "max_rss_mb": 500.0},
        "index": {"jobs": 1, "wall_s": 2.0, "cpu_s": 1.5, "max_s": 2.0, "max_rss_mb": 50.0}}
    lines = costs_table(costs, {"predict": {"wall_s": 20.0}})
    assert lines[2] == "| predict | 2 | 40 | 20.0 | 30.0 | 29 | 500 | 20 | 2.00 |"
    assert lines[3] == "| index | 1 | 2 | 2.0 | 2.0 | 2 | 50 | — | — |"
    assert lines[4] == "| all | 3 | 42 | | | | | 20 | 2.10 |"
    log = tmp_path / "run.log"
    log.write_text(LOG)
    text = job_costs_report(run, {"cpu": "test"}, isa="AVX2", log=log)
    assert text.startswith(f'`{run}`; machine: {{"cpu": "test"}}; run\'s ISA: AVX2')
    assert "| every rule | 3 | 53 | | |" in text
    with pytest.raises(VcrbenchError, match="give the folder of a finished run"):
        rule_costs(tmp_path / "results" / "missing")
