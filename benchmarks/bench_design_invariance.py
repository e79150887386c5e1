"""Design invariance of R: R_a and R_p under the linear, visual and adaptive sampling designs on
the same images, with image-level paired 95 % intervals of the differences from linear.

For each corruption, each design (``sampling.spacing``) draws N samples with the pipeline's own
stage functions (``design_samples.py``: the pilot for ``adaptive``, ``make_samples``,
``score_shard``); sample ``i`` has the same image and noise seed in every design, only its
parameters differ. The model classifies every corrupted image and its clean image
(:mod:`vcrbench.evaluation.predictions`), the outcomes are joined as the rule rates joins them
(:func:`vcrbench.evaluation.outcomes.sample_outcomes`) and fitted with the run's estimator;
:func:`vcrbench.vcr.designs.design_differences` pairs bootstrap replicate ``b`` of each design
with replicate ``b`` of linear (the same image weights), so each difference has a paired
interval. Linear, the paper's uniform parameter law, is the reference.

Sizes: 224 (default; the 1,000 ImageNet images of ``../shared/data/imagenet-sample``,
efficientnet-lite0) or 32 (the 10,000 CIFAR-10 test images of ``../shared/data/cifar10/test``
at their native size, blur lengths scaled by 32 / 224, Δv on 224 px enlargements; ``--model
trained:<model.pt>`` is required).

    python benchmarks/bench_design_invariance.py [--size 224|32] [--corruptions vcr] [--n 2000]
        [--model efficientnet-lite0] [--images DIR] [--designs linear,visual,adaptive]
        [--bins 40] [--min-count 20] [--replicates 1000] [--pilot-share 0.1] [--seed 0]
        [--threads 1] [--out DIR]

``--out DIR`` keeps each design's per-sample outcomes (with the sample's parameters) in
``DIR/outcomes-<size>/<corruption>/<design>.parquet`` and the table in
``DIR/design-invariance-<size>.md`` and ``.parquet``; a later call with the same ``--out`` and
settings re-makes the table from the saved outcomes without scoring again (other settings:
refused). One JSON line per corruption and design gives its timings (pilot, scoring,
classification) for planning.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import torch

sys.path.insert(0, str(Path(__file__).parent))
from bench_output import emit, machine_line  # noqa: E402
from design_samples import adaptive_pilot, scored_shards  # noqa: E402

from vcrbench.core.tables import markdown_table, read_table, write_table  # noqa: E402
from vcrbench.corruptions import adaptive, get_corruption  # noqa: E402
from vcrbench.corruptions.sets import expand_sets  # noqa: E402
from vcrbench.curves.tables import DEFAULT_MIN_COVERAGE  # noqa: E402
from vcrbench.data.datasets import LABEL_SPACES, build_index  # noqa: E402
from vcrbench.data.prepared import DecodedImages  # noqa: E402
from vcrbench.evaluation.outcomes import sample_outcomes  # noqa: E402
from vcrbench.evaluation.predictions import Inference, predict_clean, predict_scored  # noqa: E402
from vcrbench.vcr.designs import design_differences  # noqa: E402

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
#: size -> (default image folder, label space, index size, default model)
SIZES = {
    224: (SHARED / "imagenet-sample", "imagenet", 224, "efficientnet-lite0"),
    32: (SHARED / "cifar10" / "test", "cifar10", "native", None),
}
DESIGNS = ("linear", "visual", "adaptive")
METADATA_KEY = b"vcrbench.design_invariance"


class Run:
    """The images, the model and the clean predictions shared by every corruption."""

    def __init__(self, args: argparse.Namespace) -> None:
        folder, classes, size, _ = SIZES[args.size]
        self.args = args
        self.index, _ = build_index("imagefolder", args.images or str(folder), classes=classes,
                                    size=size)
        self.ids = self.index.column("image_id").to_pylist()
        self.clean = DecodedImages(self.index)
        self.classes = LABEL_SPACES[classes].classes
        self.inference = Inference(args.model, "cpu", args.batch_size, engine=args.engine)
        self.clean_rows: list[pa.Table] = []

    def clean_predictions(self, image_ids: list[str]) -> pa.Table:
        """Decisions on the clean images, each image classified once per process."""
        known = set().union(*(t.column("image_id").to_pylist() for t in self.clean_rows))
        missing = sorted(set(image_ids) - known)
        if missing:
            subset = self.index.filter(pc.is_in(self.index.column("image_id"),
                                                pa.array(missing)))
            self.clean_rows.append(predict_clean(subset, self.inference, self.clean))
        return pa.concat_tables(self.clean_rows)

    def settings(self, corruption: str, design: str) -> dict:
        a = self.args
        return {"corruption": corruption, "design": design, "size": a.size,
                "n": self.n(design),
                "seed": a.seed, "model": a.model, "images": str(a.images or SIZES[a.size][0]),
                **({"pilot_share": a.pilot_share, "bins": a.bins} if design == "adaptive" else {})}

    def n(self, design: str) -> int:
        """N of a design: ``--n``, or ``--n-linear`` for linear."""
        return self.args.n_linear if design == "linear" and self.args.n_linear else self.args.n

    def outcomes(self, corruption: str, design: str) -> tuple[pa.Table, dict]:
        """Outcomes of one design (with each sample's parameters) and their timings (s)."""
        a, side, n = self.args, self.args.size, self.n(design)
        extra, times = {}, {"pilot_s": 0.0, "score_s": 0.0, "predict_s": 0.0}
        if design == "adaptive":
            extra, pilot = adaptive_pilot(self.ids, self.clean, corruption, seed=a.seed, n=n,
                                          side=side, share=a.pilot_share, bins=a.bins)
            times["pilot_s"] = pilot["seconds"]
        shards = scored_shards(self.ids, self.clean, corruption, seed=a.seed, n=n,
                               spacing=design, side=side, store_images=True, **extra)
        samples, scored, predictions = [], [], []
        while True:
            start = time.perf_counter()
            shard = next(shards, None)
            times["score_s"] += time.perf_counter() - start
            if shard is None:
                break
            start = time.perf_counter()
            predictions.append(predict_scored(shard[1], self.inference))
            times["predict_s"] += time.perf_counter() - start
            samples.append(shard[0])
            scored.append(shard[1].drop_columns(["image"]))
        samples, scored = pa.concat_tables(samples), pa.concat_tables(scored)
        start = time.perf_counter()
        clean = self.clean_predictions(scored.column("image_id").to_pylist())
        times["predict_s"] += time.perf_counter() - start
        table = sample_outcomes(self.index, scored, pa.concat_tables(predictions), clean)
        for name in get_corruption(corruption).parameters:
            table = table.append_column(name, samples.column(name))
        return table, times


def saved_outcomes(run: Run, corruption: str, design: str) -> pa.Table:
    """A design's outcomes: read from ``--out`` when saved there with the same settings, else
    made (and saved with ``--out``)."""
    settings = run.settings(corruption, design)
    path = (Path(run.args.out) / f"outcomes-{run.args.size}" / corruption / f"{design}.parquet"
            if run.args.out else None)
    if path is not None and path.is_file():
        table = read_table(path)
        saved = json.loads((table.schema.metadata or {}).get(METADATA_KEY, b"{}"))
        if saved != settings:
            raise SystemExit(f"{path} was made with other settings ({saved}, now {settings}): "
                             "give another --out, or delete it to score again")
        print(json.dumps({**settings, "reused": str(path)}), flush=True)
        return table
    table, times = run.outcomes(corruption, design)
    print(json.dumps({**settings, **{k: round(v, 1) for k, v in times.items()}}), flush=True)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_table(table.replace_schema_metadata({METADATA_KEY: json.dumps(settings)}), path)
    return table


def _number(x: float | None, digits: int = 3) -> str:
    return "null" if x is None else f"{x:.{digits}f}"


def _signed(x: float) -> str:
    return f"{round(x, 3) + 0.0:+.3f}"  # + 0.0: no "-0.000"


def _difference(row: dict | None) -> str:
    if row is None:
        return "–"
    if row["difference"] is None:
        return "null" if row["R"] is None else "–"
    if row["difference_lo"] is None:
        return _signed(row["difference"])
    return (f"{_signed(row['difference'])} [{_signed(row['difference_lo'])}, "
            f"{_signed(row['difference_hi'])}]")


def markdown(table: pa.Table, designs: list[str], classes: int) -> str:
    """One row per corruption: R of linear and each design's paired difference, for accuracy
    and consistency in the data set's own classes; coverage of each design; which differences
    have an interval without 0; the notes of null values under the table."""
    rows = [r for r in table.to_pylist() if r["classes"] == classes]
    found = {(r["corruption"], r["design"], r["metric"]): r for r in rows}
    others = [d for d in designs if d != "linear"]
    header = ["corruption", "parameters", "R_a linear [95 %]",
              *(f"R_a {d} − linear [95 %]" for d in others), "R_p linear [95 %]",
              *(f"R_p {d} − linear [95 %]" for d in others),
              f"coverage {' / '.join(designs)}", "differs (interval without 0)"]
    body, notes = [], []
    for corruption in dict.fromkeys(r["corruption"] for r in rows):
        cells = [corruption, str(len(get_corruption(corruption).parameters))]
        differs = []
        for metric, short in (("accuracy", "R_a"), ("consistency", "R_p")):
            base = found.get((corruption, "linear", metric))
            cells.append("–" if base is None else
                         f"{_number(base['R'])} [{_number(base['R_lo'])}, {_number(base['R_hi'])}]"
                         if base["R_lo"] is not None else _number(base["R"]))
            for design in others:
                row = found.get((corruption, design, metric))
                cells.append(_difference(row))
                if row is not None and row["verdict"] in ("higher", "lower"):
                    differs.append(f"{short} {design}")
        coverage = [found.get((corruption, d, "accuracy")) for d in designs]
        cells.append(" / ".join("–" if r is None else f"{r['coverage']:.2f}" for r in coverage))
        cells.append(", ".join(differs) or "—")
        body.append(cells)
        notes += [f"- {corruption}, {r['design']}, {r['metric']}: {r['note']}"
                  for r in rows if r["corruption"] == corruption and r["R"] is None]
    text = "\n".join(markdown_table(header, body))
    return text + ("\n\nNull values:\n" + "\n".join(notes) if notes else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=224, choices=sorted(SIZES))
    parser.add_argument("--corruptions", default="vcr", help="names or sets, comma-separated")
    parser.add_argument("--n", type=int, default=2000, help="N per corruption and design")
    parser.add_argument("--n-linear", type=int, help="a larger N for linear (its first --n "
                        "samples are the other designs' samples; default --n)")
    parser.add_argument("--model", help="default efficientnet-lite0 at 224; at 32 required "
                        "(trained:<model.pt>)")
    parser.add_argument("--images", help="image folder (default: the shared one of --size)")
    parser.add_argument("--designs", default=",".join(DESIGNS),
                        help="comma-separated, linear first (the reference)")
    parser.add_argument("--bins", type=int, default=40, help="M (the paper: 40)")
    parser.add_argument("--min-count", type=int, default=20, help="L (the paper: 20)")
    parser.add_argument("--min-coverage", type=float, default=DEFAULT_MIN_COVERAGE)
    parser.add_argument("--replicates", type=int, default=1000, help="bootstrap B")
    parser.add_argument("--pilot-share", type=float, default=adaptive.PILOT_SHARE)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--engine", default="auto", choices=("auto", "eager", "openvino"),
                        help="inference engine (vcrbench.models.engines)")
    parser.add_argument("--out", help="folder for the outcomes and the table")
    args = parser.parse_args()
    args.model = args.model or SIZES[args.size][3]
    if args.model is None:
        parser.error("--size 32 needs --model trained:<model.pt> (a CIFAR-10 model)")
    designs = args.designs.split(",")
    if designs[0] != "linear" or not set(designs) <= set(DESIGNS):
        parser.error(f"--designs: linear first, then any of {DESIGNS}")
    if args.n_linear is not None and args.n_linear < args.n:
        parser.error("--n-linear must be at least --n")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    run = Run(args)
    tables = []
    for corruption in expand_sets(args.corruptions.split(",")):
        outcomes = {d: saved_outcomes(run, corruption, d) for d in designs}
        fit_start = time.perf_counter()
        tables.append(design_differences(
            outcomes, corruption=corruption, model=args.model, bins=args.bins,
            min_count=args.min_count, n_boot=args.replicates, seed=args.seed,
            label_classes=run.classes, min_coverage=args.min_coverage))
        print(json.dumps({"corruption": corruption, "fit_s": round(time.perf_counter()
                                                                    - fit_start, 1)}), flush=True)
    table = pa.concat_tables(tables)
    sizes = f" ({run.n('linear')} for linear)" if run.n("linear") != args.n else ""
    text = (f"{machine_line()}\n\nN = {args.n}{sizes} per corruption and design at {args.size} "
            f"px on {len(run.ids)} images ({args.images or SIZES[args.size][0].name}), model "
            f"{args.model}, seed {args.seed}; M = {args.bins} bins, L = {args.min_count}, "
            f"B = {args.replicates} image-bootstrap replicates paired across designs; "
            f"{time.perf_counter() - start:.0f} s\n\n" + markdown(table, designs, run.classes))
    out = Path(args.out) / f"design-invariance-{args.size}.md" if args.out else None
    emit(text, out)
    if out is not None:
        write_table(table, out.with_suffix(".parquet"))


if __name__ == "__main__":
    main()
