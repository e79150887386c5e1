"""Train a CIFAR-10 model from scratch and report test accuracy against training time.

Examples (machine and command go with every figure reported)::

    # the fast CPU network, its CPU recipe (goal: >= 85 % test accuracy within 15 min, 2 cores)
    python benchmarks/bench_cifar_train.py --arch fastnet --recipe fast --out results/bench/fastnet
    # the same with AugMix's views and Jensen-Shannon loss
    python benchmarks/bench_cifar_train.py --method augmix --out results/bench/fastnet-augmix
    # REVa-: counterparts crafted on a trained standard model (cached in --out), then training
    python benchmarks/bench_cifar_train.py --method reva_minus --standard std/model.pt \
        --pgd-steps 10 --out results/bench/fastnet-reva-minus
    # AugMix's recipe (100 epochs) on a GPU
    python benchmarks/bench_cifar_train.py --arch wrn-40-2 --recipe augmix --device cuda \\
        --precision bf16 --data cifar10.cifarpack.npz --out /tmp/wrn

Data: ``--data`` is the shared class-folder copy (default ``../shared/data/cifar10``) or a pack
of it (``benchmarks/cifar_data.py``). Each epoch's state is saved in ``--out`` (an interrupted
run resumes); ``log.csv`` has one row per epoch: training seconds so far (evaluation excluded),
learning rate, training loss and accuracy, test accuracy (every ``--eval-every`` epochs and at
the end), and ``model.pt`` the final weights with the recipe. The last line is a JSON summary.
``--train-per-class K`` trains on K images of each class (the same subset for every method).
``--stop-after K`` stops after epoch K on the recipe's schedule (resumable); ``--export PATH``
writes the weights reached as a ``trained:<model.pt>`` checkpoint with their test accuracy.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))
from bench_output import machine  # noqa: E402

from vcrbench.data.cifar_pack import load  # noqa: E402
from vcrbench.training.cifar_c import balanced_subset, load_model, pgd_images  # noqa: E402
from vcrbench.training.scratch import (  # noqa: E402
    ADVERSARIAL_METHODS,
    AUGMIX_METHODS,
    FAST_RECIPE,
    SCRATCH_METHODS,
    ScratchRecipe,
    ScratchReva,
    accuracy,
    load_state,
    new_state,
    save_state,
    train_epoch,
)
from vcrbench.training.spec import AugMixSettings  # noqa: E402
from vcrbench.training.view_workers import ViewWorkers  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def counterparts(args, train, out: Path, device: torch.device) -> np.ndarray:
    """The PGD counterparts of the training images on ``--standard`` (cached in ``out``)."""
    cache = out / (f"counterparts-{args.pgd_steps}-{args.pgd_eps:.5f}-{args.pgd_alpha:.5f}-"
                   f"{len(train.labels)}.npy")
    if cache.is_file():
        return np.load(cache)
    start = time.perf_counter()
    model, recipe = load_model(args.standard, device, "fp32")
    images = pgd_images(model, recipe, train.images, train.labels, list(train.image_ids),
                        steps=args.pgd_steps, eps=args.pgd_eps, alpha=args.pgd_alpha,
                        seed=args.seed, device=device)
    np.save(cache, images)
    print(json.dumps({"counterparts": len(images), "pgd_steps": args.pgd_steps,
                      "craft_s": round(time.perf_counter() - start, 1)}), flush=True)
    return images


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arch", default="fastnet")
    parser.add_argument("--recipe", choices=("fast", "augmix"), default="fast",
                        help="fast: FAST_RECIPE; augmix: AugMix's CIFAR recipe (the default)")
    parser.add_argument("--epochs", type=int, help="override the recipe's epochs")
    parser.add_argument("--batch-size", type=int, help="override the recipe's batch size")
    parser.add_argument("--lr", type=float, help="override the recipe's peak learning rate")
    parser.add_argument("--warmup-epochs", type=float,
                        help="override the recipe's warm-up epochs (one-cycle schedule)")
    parser.add_argument("--method", choices=SCRATCH_METHODS, default="standard",
                        help="augmix: the image and two AugMix views (AugMix's CIFAR settings); "
                             "reva_minus / reva: those and the PGD counterpart (REVa's Eq. 2)")
    parser.add_argument("--standard", help="reva_minus / reva: the standard model.pt that "
                                           "crafts the PGD counterparts")
    parser.add_argument("--pgd-steps", type=int, default=40)
    parser.add_argument("--pgd-eps", type=float, default=8 / 255)
    parser.add_argument("--pgd-alpha", type=float, default=2 / 255)
    parser.add_argument("--targeted", default="", help="reva: comma-separated corruptions added "
                                                       "to AugMix's operations")
    parser.add_argument("--severity", type=int, default=3, help="reva: their CIFAR-10-C severity")
    parser.add_argument("--train-per-class", type=int)
    parser.add_argument("--precision", choices=("fp32", "bf16"))
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", default=str(ROOT.parent / "shared/data/cifar10"))
    parser.add_argument("--cache", help="npz cache of a class folder's decoded arrays")
    parser.add_argument("--out", required=True)
    parser.add_argument("--eval-every", type=int, default=1)
    parser.add_argument("--craft-only", action="store_true",
                        help="reva_minus / reva: craft the counterparts into --out and stop "
                             "(another run with the same --out, or a copy of the file, reuses "
                             "them)")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's)")
    parser.add_argument("--view-workers", type=int, default=0,
                        help="augmix / reva_minus / reva: make the AugMix views on the CPU in "
                             "this many worker processes, ahead of the step (0: in the training "
                             "process, on its device)")
    parser.add_argument("--stop-after", type=int,
                        help="stop after this epoch, keeping the recipe's schedule (resumable)")
    parser.add_argument("--export",
                        help="also write the weights reached as a trained:<model.pt> checkpoint "
                             "at this path (for the workflow's benchmarks), with its test accuracy")
    parser.add_argument("--deadline", type=float,
                        help="seconds after start: stop (state saved) before an epoch that "
                             "would end later, judged by the slowest epoch so far")
    args = parser.parse_args()

    start = time.perf_counter()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True
    values = dict(FAST_RECIPE) if args.recipe == "fast" else {"architecture": args.arch}
    reva = None
    if args.craft_only and args.method not in ADVERSARIAL_METHODS:
        parser.error("--craft-only crafts REVa's counterparts: give --method reva_minus or reva")
    if args.method in ADVERSARIAL_METHODS:
        if not args.standard:
            parser.error(f"--method {args.method} needs --standard MODEL.pt")
        reva = ScratchReva(targeted=tuple(t for t in args.targeted.split(",") if t),
                           severity=args.severity)
    values.update(architecture=args.arch, classes=10, seed=args.seed, method=args.method,
                  augmix=AugMixSettings() if args.method in AUGMIX_METHODS else None, reva=reva)
    for key in ("epochs", "batch_size", "lr", "warmup_epochs"):
        if getattr(args, key) is not None:
            values[key] = getattr(args, key)
    if args.precision:
        values["precision"] = args.precision
    recipe = ScratchRecipe(**values)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    train, test = load(args.data, args.cache)
    if args.train_per_class:
        keep = balanced_subset(train.labels, 10 * args.train_per_class, args.seed)
        train = type(train)(train.images[keep], train.labels[keep],
                            tuple(train.image_ids[i] for i in keep), train.classes)
    x_train = torch.as_tensor(train.images, device=device)
    y_train = torch.as_tensor(train.labels, device=device)
    adversarial = None
    if reva is not None:
        adversarial = torch.as_tensor(counterparts(args, train, out, device), device=device)
        if args.craft_only:
            return
    x_test = torch.as_tensor(test.images, device=device)
    y_test = torch.as_tensor(test.labels, device=device)
    print(json.dumps({"machine": machine(device), "recipe": recipe.as_dict(),
                      "load_s": round(time.perf_counter() - start, 1)}), flush=True)

    state_path = out / "state.pt"
    state = load_state(state_path, recipe, device) if state_path.is_file() else new_state(
        recipe, device)
    rows = []
    log_path = out / "log.csv"
    if state.epoch and log_path.is_file():
        with log_path.open() as handle:
            rows = list(csv.DictReader(handle))[: state.epoch]
    trained_s = float(rows[-1]["train_s"]) if rows else 0.0
    slowest = 0.0
    pool = (ViewWorkers(args.view_workers)
            if args.view_workers and args.method in AUGMIX_METHODS else nullcontext())
    with pool as workers:
        while state.epoch < recipe.epochs:
            if args.stop_after is not None and state.epoch >= args.stop_after:
                print(json.dumps({"stopped": f"--stop-after {args.stop_after}"}), flush=True)
                break
            if args.deadline and time.perf_counter() - start + slowest > args.deadline:
                print(json.dumps({"stopped": f"deadline before epoch {state.epoch + 1}"}),
                      flush=True)
                break
            epoch_start = time.perf_counter()
            row = train_epoch(state, x_train, y_train, adversarial=adversarial,
                              view_workers=workers)
            if device.type == "cuda":
                torch.cuda.synchronize()
            seconds = time.perf_counter() - epoch_start
            slowest = max(slowest, seconds)
            trained_s += seconds
            last = state.epoch == recipe.epochs
            test_acc = ""
            if last or state.epoch % args.eval_every == 0:
                test_acc = round(accuracy(state.model, x_test, y_test, recipe), 4)
            rows.append({"epoch": state.epoch, "train_s": round(trained_s, 1),
                         "lr": f"{row['lr']:.3g}", "loss": round(row["loss"], 4),
                         "train_acc": round(row["accuracy"], 4), "test_acc": test_acc})
            print(json.dumps(rows[-1]), flush=True)
            save_state(state, state_path)
            with log_path.open("w", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(rows[-1]))
                writer.writeheader()
                writer.writerows(rows)
    summary = {"arch": recipe.architecture, "epochs_done": state.epoch,
               "epochs": recipe.epochs, "train_s": round(trained_s, 1),
               "wall_s": round(time.perf_counter() - start, 1)}
    if state.epoch == recipe.epochs:
        summary["test_acc"] = round(accuracy(state.model, x_test, y_test, recipe), 4)
        summary["test_acc_flip_tta"] = round(
            accuracy(state.model, x_test, y_test, recipe, flip_average=True), 4)
        torch.save({"recipe": recipe.as_dict(), "log": state.log,
                    "state_dict": {k: v.cpu() for k, v in state.model.state_dict().items()}},
                   out / "model.pt")
    if args.export:
        save_state(state, args.export, optimizer=False,
                   data={"label_space": "cifar10", "side": 32, "name": recipe.architecture})
        summary["exported"] = {"path": args.export, "epoch": state.epoch,
                               "test_acc": round(accuracy(state.model, x_test, y_test, recipe), 4)}
    if device.type == "cuda":
        summary["peak_gpu_mem_mb"] = round(torch.cuda.max_memory_allocated(device) / 2**20)
    summary["pid"] = os.getpid()
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
