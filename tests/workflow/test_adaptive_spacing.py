"""sampling.spacing adaptive in the workflow: a dry run plans one pilot per corruption before
its samples, and the coverage table and summary read the pilots."""

from __future__ import annotations

from helpers.paths import REPO
from helpers.workflow import snakemake


def test_adaptive_spacing_plans_a_pilot_per_corruption(tmp_path):
    result = snakemake("-n", "--configfile", str(REPO / "config/test.yaml"), "--config",
                       "sampling={spacing: adaptive, n: 80, shard_size: 40}", "--printshellcmds",
                       workdir=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    counts = {row[0]: int(row[1]) for row in (line.split() for line in result.stdout.splitlines())
              if len(row) == 2 and row[1].isdigit()}
    assert counts["pilot"] == 2 and counts["samples"] == 2, counts  # two corruptions
    blocks = result.stdout.split("\n\n")
    samples = [b for b in blocks if "rule samples:" in b]
    assert all("pilot/" in b for b in samples), samples
    for rule in ("rule summary:", "rule coverage_table:"):
        block = next(b for b in blocks if rule in b)
        assert "pilot/gaussian_noise.parquet" in block, block
