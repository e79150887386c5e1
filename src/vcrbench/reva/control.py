"""REVa part 1's positive control, read three ways off a finished run's tables (``vcrbench
control weak``; config/control-reva-weak-cifar10.yaml).

The control: R on the weak-robust set is below R on the test images for the corruptions part 1
calls non-robust. The weak set of the ranking model is clean-correct by construction (only
clean-correct pool images are eligible), the test images are not, so the accuracy curve gives
the weak set a head start (it starts at 1, the test images' at the model's clean accuracy).
Three readings, each the difference weak − test with its 95 % interval (image bootstrap;
replicate b of each set weighs its images by their keyed weights, so the draws are independent
where the sets are disjoint and paired where they share images):

1. ``R_a``, accuracy curves, all test images (the run's ``reva/r-weak-vs-all.parquet``);
2. ``R_p``, consistency curves, all test images (the same table): each image against the
   model's own clean prediction, which removes the head start;
3. ``R_a`` on the clean-correct images of both sets: the curves fitted again on those images
   only, with the run's binning, bootstrap and seed (the keyed image weights are the run's). On
   a clean-correct image "correct" and "consistent" are the same outcome, so this is also R_p
   on those images: reading 2 with the clean-wrong test images left out, not an independent
   confirmation.

With a baseline config (the run's config with ``config/control-reva-unselected-cifar10.yaml``
overlaid), a fourth reading: the weak set against that run's random baseline of clean-correct
pool images the analyser did not select (``reva.weak.draw: random-unselected``), weak −
baseline for R_a and R_p. Both sets are seen, clean-correct images of the same model (checked:
the two runs' model files must be the same bytes), so what is left is the selection's own
effect.

The curves of reading 3 are fitted by the function the caller passes as ``fit`` (VCR-Bench's
:func:`vcrbench.vcr.estimation.fit_curves_configured`, as the run's curves jobs): a paper
package does not import another.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from vcrbench.core.tables import read_table
from vcrbench.data.datasets import label_space
from vcrbench.errors import VcrbenchError
from vcrbench.reva.report import non_robust_corruptions
from vcrbench.reva.weak_vs_all import weak_vs_all_rows

#: ``fit(outcomes, *, model, corruption, binning, bootstrap, seed, label_classes)`` ->
#: ``(curves, replicates, metrics)``: the run's curve estimation.
Fit = Callable[..., tuple[pa.Table, pa.Table, pa.Table]]


def _text(row: dict | None) -> str:
    if row is None or row["difference"] is None:
        return "undefined"
    if row["difference_lo"] is None:
        return f"{row['difference']:+.3f}"
    return (f"{row['difference']:+.3f} [{row['difference_lo']:+.3f}, "
            f"{row['difference_hi']:+.3f}]" + (" **lower**" if row["lower_on_weak"] else ""))


def _clean_correct(outcomes: pa.Table) -> pa.Table:
    """The samples of the images the model classifies correctly when clean."""
    return outcomes.filter(pc.fill_null(pc.equal(outcomes["clean_correct"], True), False))


def clean_correct_curves(folder: Path, model: str, slug: str, corruption: str, config: Mapping,
                         classes: int, fit: Fit) -> tuple[pa.Table, pa.Table]:
    """(metrics, replicates) of a set's curves on its clean-correct images: fitted again with
    ``fit`` on those images' samples where the set has clean-wrong ones, else the run's (the
    ranking model's weak set or baseline has none). ``slug``: the model's folder name."""
    outcomes = read_table(folder / "outcomes" / slug / f"{corruption}.parquet")
    correct = _clean_correct(outcomes)
    if correct.num_rows == outcomes.num_rows:  # nothing to leave out: the run's curves
        return (read_table(folder / "metrics" / slug / f"{corruption}.parquet"),
                read_table(folder / "curves" / slug / f"{corruption}-replicates.parquet"))
    _, replicates, metrics = fit(
        correct, model=model, corruption=corruption, binning=config["binning"],
        bootstrap=config["bootstrap"], seed=config["seed"], label_classes=classes)
    return metrics, replicates


def clean_correct_rows(run: Path, model: str, slug: str, corruption: str, config: Mapping,
                       classes: int, fit: Fit) -> list[dict]:
    """Both sets on their clean-correct images, then the weak-vs-all rows (reading 3)."""
    return weak_vs_all_rows(
        model, corruption,
        clean_correct_curves(run / "reva" / "weak", model, slug, corruption, config, classes,
                             fit),
        clean_correct_curves(run, model, slug, corruption, config, classes, fit))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def baseline_rows(run: Path, baseline: Path, model: str, slug: str, corruption: str,
                  config: Mapping, classes: int, fit: Fit) -> list[dict]:
    """The weak set (``run``) against the random baseline (``baseline``'s ``reva/weak``), each
    on its clean-correct images (all of them for the ranking model)."""
    return weak_vs_all_rows(
        model, corruption,
        *(clean_correct_curves(folder / "reva" / "weak", model, slug, corruption, config,
                               classes, fit)
          for folder in (run, baseline)))


def baseline_lines(run: Path, baseline_config: Mapping, model: str, slug: str, classes: int,
                   corruptions: list[str], non_robust: list[str], fit: Fit,
                   results: Path = Path("results")) -> list[str]:
    """Reading 4 (module docstring): a Markdown table of weak − random baseline; the baseline
    run's folder is ``results / baseline_config["run"]``."""
    baseline = Path(results) / baseline_config["run"]
    if baseline_config["reva"]["weak"]["draw"] != "random-unselected":
        raise VcrbenchError("--baseline must set reva.weak.draw: random-unselected")
    if not (baseline / "reva" / "r-weak-vs-all.parquet").is_file():
        raise VcrbenchError(f"{baseline}/reva/r-weak-vs-all.parquet does not exist: run the "
                            "baseline config first")
    models = sorted((run / "models").glob("*/model.pt"))
    same = [m.parent.name for m in models
            if (baseline / "models" / m.parent.name / "model.pt").is_file()
            and _digest(m) == _digest(baseline / "models" / m.parent.name / "model.pt")]
    if len(same) != len(models):
        raise VcrbenchError(f"{run} and {baseline} trained different models "
                            f"({len(same)} of {len(models)} model files are the same bytes)")
    rankings = [read_table(folder / "reva" / "ranking.parquet").drop_columns("selected")
                for folder in (run, baseline)]
    if not rankings[0].equals(rankings[1]):
        raise VcrbenchError(f"{run} and {baseline} ranked the pool differently "
                            "(reva/ranking.parquet): the baseline is not drawn from what this "
                            "weak set leaves out; run both from the same config and code")
    weak_ids = set(read_table(run / "reva" / "weak" / "index.parquet")
                   .column("image_id").to_pylist())
    drawn = read_table(baseline / "reva" / "weak" / "index.parquet")
    if weak_ids & set(drawn.column("image_id").to_pylist()):
        raise VcrbenchError(f"the baseline {baseline} shares images with the weak set of {run}")
    lines = ["", f"## The weak set against the random baseline `{baseline}`", "",
             f"{drawn.num_rows} clean-correct pool images the analyser did not select, drawn at "
             f"random (reva.weak.draw), against the {len(weak_ids)} of the weak set; the same "
             f"model ({', '.join(same) or 'no trained model'}: identical files) and ranking. "
             f"Weak − baseline on each set's images that {model} classifies correctly (all of "
             f"them for the ranking model), 95 % intervals (image bootstrap, independent draws of "
             "the two disjoint sets).", "",
             "| corruption | non-robust | R_a | R_p |", "|---|---|---|---|"]
    shown: dict[str, list[str]] = {"R_a": [], "R_p": []}
    lower = {"R_a": 0, "R_p": 0}
    tested = {"R_a": 0, "R_p": 0}  # corruptions with an interval of the difference
    for c in corruptions:
        rows = {r["metric"]: r for r in baseline_rows(run, baseline, model, slug, c,
                                                      baseline_config, classes, fit)
                if r["classes"] == classes}
        cells = {"R_a": rows.get("accuracy"), "R_p": rows.get("consistency")}
        lines.append(f"| {c} | {'yes' if c in non_robust else ''} | "
                     + " | ".join(_text(r) for r in cells.values()) + " |")
        for name, r in cells.items():
            if r is None or r["lower_on_weak"] is None:
                continue
            tested[name] += 1
            if r["lower_on_weak"]:
                lower[name] += 1
                if c in non_robust:
                    shown[name].append(c)
    lines += ["", "Lower on the weak set than on the baseline (interval below 0): R_a for "
                  f"{lower['R_a']} of the {tested['R_a']} corruptions with an interval, R_p for "
                  f"{lower['R_p']} of {tested['R_p']} (for the ranking model both sets are "
                  "clean-correct, where R_a and R_p are the same outcome); of the "
                  f"{len(non_robust)} non-robust:"]
    lines += [f"- {name}: {len(found)} ({', '.join(found) or '–'})"
              for name, found in shown.items()]
    return lines


def weak_control(config: Mapping, model: str, slug: str, fit: Fit,
                 baseline_config: Mapping | None = None, results: Path = Path("results")) -> str:
    """The Markdown report of readings 1–3 for ``model`` (its folder name ``slug``) of the run
    ``results / config["run"]`` (``config`` validated, with defaults), and reading 4 against the
    run of ``baseline_config`` where one is given."""
    run = Path(results) / config["run"]
    if not (run / "reva" / "r-weak-vs-all.parquet").is_file():
        raise VcrbenchError(f"{run}/reva/r-weak-vs-all.parquet does not exist: run this from the "
                            "repository root after the run has finished")
    table = read_table(run / "reva" / "r-weak-vs-all.parquet").to_pylist()
    table = [r for r in table if r["model"] == model]
    if not table:
        raise VcrbenchError(f"{run}/reva/r-weak-vs-all.parquet has no rows of {model!r}: finish "
                            "the run first, or name a model part 1 validates (--model)")
    classes = label_space(config["dataset"]).classes
    shared = set(read_table(run / "reva" / "weak" / "index.parquet").column("image_id").to_pylist()
                 ) & set(read_table(run / "data" / "index.parquet").column("image_id").to_pylist())
    draws = (f"paired draws: the sets share {len(shared)} images" if shared
             else "independent draws of the two disjoint sets")
    groups = [g for g in read_table(run / "reva" / "groups.parquet").to_pylist()
              if g["model"] == model]
    non_robust, measure = non_robust_corruptions(groups)
    by = {(r["corruption"], r["metric"]): r for r in table if r["classes"] == classes}
    corruptions = list(dict.fromkeys(r["corruption"] for r in table))
    lines = [f"# REVa part 1's positive control: `{run}`, {model}", "",
             f"Non-robust by the chosen rule ({measure}): {', '.join(non_robust) or 'none'}. "
             f"Weak − test, 95 % intervals (image bootstrap, {draws}); **lower**: the "
             "interval is below 0.", "",
             "| corruption | non-robust | R_a, all test images | R_p, all test images | "
             "R_a, clean-correct images of both sets |", "|---|---|---|---|---|"]
    shown: dict[str, list[str]] = {"R_a": [], "R_p": [], "R_a clean-correct": []}
    for c in corruptions:
        third = next((r for r in clean_correct_rows(run, model, slug, c, config, classes, fit)
                      if (r["metric"], r["classes"]) == ("accuracy", classes)), None)
        cells = {"R_a": by.get((c, "accuracy")), "R_p": by.get((c, "consistency")),
                 "R_a clean-correct": third}
        lines.append(f"| {c} | {'yes' if c in non_robust else ''} | "
                     + " | ".join(_text(r) for r in cells.values()) + " |")
        if c in non_robust:
            for name, r in cells.items():
                if r is not None and r["lower_on_weak"]:
                    shown[name].append(c)
    lines += ["", f"Shown (interval below 0) for the {len(non_robust)} non-robust corruptions:"]
    lines += [f"- {name}: {len(found)} ({', '.join(found) or '–'})"
              for name, found in shown.items()]
    if baseline_config is not None:
        lines += baseline_lines(run, baseline_config, model, slug, classes, corruptions,
                                non_robust, fit, results)
    return "\n".join(lines) + "\n"
