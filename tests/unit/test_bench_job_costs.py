"""benchmarks/bench_job_costs.py's reading of a Snakemake log: every finished job's wall time
per rule from its start and finish stamps, jobs left unfinished left out."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_job_costs.py"
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


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_job_costs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_finished_job_counts_once(bench, tmp_path):
    log = tmp_path / "run.snakemake.log"
    log.write_text(LOG)
    costs, span, unfinished = bench.log_costs(log)
    assert costs == {"index": {"jobs": 2, "wall_s": 2.0 + 25.0, "max_s": 25.0},
                     "score": {"jobs": 1, "wall_s": 26.0, "max_s": 26.0}}
    assert span == 27.0  # 13:50:34 to 13:51:01; the unfinished curves job is not counted
    assert unfinished == 1
    text = "\n".join(bench.log_table(costs, span, unfinished))
    assert "1 job(s) started without finishing" in text
    assert "| index | 2 | 27 | 13.5 | 25 |" in text and "| every rule | 3 | 53 | | |" in text


def test_a_log_without_finished_jobs_is_refused(bench, tmp_path):
    log = tmp_path / "empty.log"
    log.write_text("Building DAG of jobs...\n")
    with pytest.raises(SystemExit, match="no finished jobs"):
        bench.log_costs(log)
