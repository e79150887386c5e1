"""REVa part 1's positive control (issue 32), read three ways off a finished run's tables.

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
3. ``R_a`` on the clean-correct images of both sets: the curves fitted again here on those
   images only, with the run's binning, bootstrap and seed (the keyed image weights are the
   run's). On a clean-correct image "correct" and "consistent" are the same outcome, so this is
   also R_p on those images: reading 2 with the clean-wrong test images left out, not an
   independent confirmation.

With ``--baseline OVERLAY`` (a config overlaid on ``--configfile`` as Snakemake merges two
``--configfile``s; ``config/control-reva-unselected-cifar10.yaml``), a fourth reading: the weak
set against that run's random baseline of clean-correct pool images the analyser did not select
(``reva.weak.draw: random-unselected``), weak − baseline for R_a and R_p. Both sets are seen,
clean-correct images of the same model (checked: the two runs' model files must be the same
bytes), so what is left is the selection's own effect.

    python benchmarks/bench_weak_control.py --configfile config/control-reva-weak-cifar10.yaml
    python benchmarks/bench_weak_control.py --configfile config/control-reva-weak-cifar10.yaml \
        --baseline config/control-reva-unselected-cifar10.yaml

Readings 1-3 of the baseline run itself (the baseline against the test images: seen against
unseen images) come from its two config files:

    python benchmarks/bench_weak_control.py --configfile config/control-reva-weak-cifar10.yaml \
        config/control-reva-unselected-cifar10.yaml
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import sys
from pathlib import Path

import pyarrow.compute as pc
import yaml
from snakemake.utils import update_config

sys.path.insert(0, str(Path(__file__).parent))
from bench_output import emit  # noqa: E402

from vcrbench.config import evaluated_models, model_slug, validate_config  # noqa: E402
from vcrbench.core.tables import read_table  # noqa: E402
from vcrbench.data.datasets import label_space  # noqa: E402
from vcrbench.reva.report import non_robust_corruptions  # noqa: E402
from vcrbench.reva.weak_vs_all import weak_vs_all_rows  # noqa: E402
from vcrbench.vcr.estimation import fit_curves_configured  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def _text(row: dict | None) -> str:
    if row is None or row["difference"] is None:
        return "undefined"
    if row["difference_lo"] is None:
        return f"{row['difference']:+.3f}"
    return (f"{row['difference']:+.3f} [{row['difference_lo']:+.3f}, "
            f"{row['difference_hi']:+.3f}]" + (" **lower**" if row["lower_on_weak"] else ""))


def _clean_correct(outcomes):
    """The samples of the images the model classifies correctly when clean."""
    return outcomes.filter(pc.fill_null(pc.equal(outcomes["clean_correct"], True), False))


def clean_correct_curves(folder: Path, model: str, corruption: str, config: dict,
                         classes: int) -> tuple:
    """(metrics, replicates) of a set's curves on its clean-correct images: fitted again on
    those images' samples where the set has clean-wrong ones, else the run's (the ranking
    model's weak set or baseline has none)."""
    slug = model_slug(model)
    outcomes = read_table(folder / "outcomes" / slug / f"{corruption}.parquet")
    correct = _clean_correct(outcomes)
    if correct.num_rows == outcomes.num_rows:  # nothing to leave out: the run's curves
        return (read_table(folder / "metrics" / slug / f"{corruption}.parquet"),
                read_table(folder / "curves" / slug / f"{corruption}-replicates.parquet"))
    _, replicates, metrics = fit_curves_configured(
        correct, model=model, corruption=corruption, binning=config["binning"],
        bootstrap=config["bootstrap"], seed=config["seed"], label_classes=classes)
    return metrics, replicates


def clean_correct_rows(run: Path, model: str, corruption: str, config: dict,
                       classes: int) -> list[dict]:
    """Both sets on their clean-correct images, then the weak-vs-all rows (reading 3 of the
    module docstring)."""
    return weak_vs_all_rows(
        model, corruption, clean_correct_curves(run / "reva" / "weak", model, corruption,
                                                config, classes),
        clean_correct_curves(run, model, corruption, config, classes))


def merged(base: dict, overlay: dict) -> dict:
    """``overlay`` on a copy of ``base`` with Snakemake's own merge of two ``--configfile``s
    (nested mappings key by key)."""
    out = copy.deepcopy(base)
    update_config(out, overlay)
    return out


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def baseline_rows(run: Path, baseline: Path, model: str, corruption: str, config: dict,
                  classes: int) -> list[dict]:
    """The weak set (``run``) against the random baseline (``baseline``'s ``reva/weak``), each
    on its clean-correct images (all of them for the ranking model)."""
    return weak_vs_all_rows(
        model, corruption,
        *(clean_correct_curves(folder / "reva" / "weak", model, corruption, config, classes)
          for folder in (run, baseline)))


def baseline_lines(run: Path, baseline_config: dict, model: str, classes: int,
                   corruptions: list[str], non_robust: list[str]) -> list[str]:
    """Reading 4 (module docstring): a Markdown table of weak − random baseline."""
    baseline = Path("results") / baseline_config["run"]
    if baseline_config["reva"]["weak"]["draw"] != "random-unselected":
        raise SystemExit("--baseline must set reva.weak.draw: random-unselected")
    if not (baseline / "reva" / "r-weak-vs-all.parquet").is_file():
        raise SystemExit(f"{baseline}/reva/r-weak-vs-all.parquet does not exist: run the "
                         "baseline config first")
    models = sorted((run / "models").glob("*/model.pt"))
    same = [m.parent.name for m in models
            if (baseline / "models" / m.parent.name / "model.pt").is_file()
            and _digest(m) == _digest(baseline / "models" / m.parent.name / "model.pt")]
    if len(same) != len(models):
        raise SystemExit(f"{run} and {baseline} trained different models "
                         f"({len(same)} of {len(models)} model files are the same bytes)")
    rankings = [read_table(folder / "reva" / "ranking.parquet").drop_columns("selected")
                for folder in (run, baseline)]
    if not rankings[0].equals(rankings[1]):
        raise SystemExit(f"{run} and {baseline} ranked the pool differently "
                         "(reva/ranking.parquet): the baseline is not drawn from what this weak "
                         "set leaves out; run both from the same config and code")
    weak_ids = set(read_table(run / "reva" / "weak" / "index.parquet")
                   .column("image_id").to_pylist())
    drawn = read_table(baseline / "reva" / "weak" / "index.parquet")
    if weak_ids & set(drawn.column("image_id").to_pylist()):
        raise SystemExit(f"the baseline {baseline} shares images with the weak set of {run}")
    lines = ["", f"## The weak set against the random baseline `{baseline}`", "",
             f"{drawn.num_rows} clean-correct pool images the analyser did not select, drawn at "
             f"random (reva.weak.draw), against the {len(weak_ids)} of the weak set; the same "
             f"model ({', '.join(same) or 'no trained model'}: identical files) and ranking. "
             f"Weak − baseline on each set's images that {model} classifies correctly (all of "
             f"them for the ranking model), 95 % intervals (image bootstrap, independent draws of "
             "the two disjoint sets).", "",
             "| corruption | non-robust | R_a | R_p |", "|---|---|---|---|"]
    shown = {"R_a": [], "R_p": []}
    lower = {"R_a": 0, "R_p": 0}
    tested = {"R_a": 0, "R_p": 0}  # corruptions with an interval of the difference
    for c in corruptions:
        rows = {r["metric"]: r for r in baseline_rows(run, baseline, model, c, baseline_config,
                                                      classes) if r["classes"] == classes}
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configfile", type=Path, nargs="+", required=True,
                        help="the run's config files, later ones overlaid as Snakemake does")
    parser.add_argument("--model", default=None, help="a validated model (default: the first)")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="a config overlaid on --configfile that runs the random baseline "
                             "(config/control-reva-unselected-cifar10.yaml)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    schema = REPO / "schemas" / "config.schema.yaml"
    raw: dict = {}
    for path in args.configfile:
        raw = merged(raw, yaml.safe_load(path.read_text()))
    config = validate_config(raw, schema)
    run = Path("results") / config["run"]  # as Snakemake: from the repository root
    if not (run / "reva" / "r-weak-vs-all.parquet").is_file():
        raise SystemExit(f"{run}/reva/r-weak-vs-all.parquet does not exist: run this from the "
                         "repository root after the run has finished")
    model = args.model or (config["reva"]["models"] or evaluated_models(config))[0]
    table = read_table(run / "reva" / "r-weak-vs-all.parquet").to_pylist()
    table = [r for r in table if r["model"] == model]
    if not table:
        raise SystemExit(f"{run}/reva/r-weak-vs-all.parquet has no rows of {model!r}: finish "
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
    shown = {"R_a": [], "R_p": [], "R_a clean-correct": []}
    for c in corruptions:
        third = next((r for r in clean_correct_rows(run, model, c, config, classes)
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
    if args.baseline is not None:
        overlay = validate_config(merged(raw, yaml.safe_load(args.baseline.read_text())), schema)
        lines += baseline_lines(run, overlay, model, classes, corruptions, non_robust)
    emit("\n".join(lines) + "\n", args.out)


if __name__ == "__main__":
    main()
