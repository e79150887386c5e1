"""Rule train_epoch: one epoch of one train entry, from random initialisation (epoch 1) or the
previous epoch's state, then its accuracy on the run's evaluation images. A REVa entry also
reads its PGD counterparts and (targeted: auto) REVa part 1's groups of its standard model."""

import os
import sys
import time
from contextlib import nullcontext
from pathlib import Path

# A training epoch has its cores to itself (threads: train): busy-waiting OpenMP threads train
# fastnet a third faster than the passive ones rules/common.smk asks for jobs that share cores
# (84 against 116 s an epoch on the 2 development cores, the same weights). Set before torch
# loads its OpenMP runtime.
os.environ["OMP_WAIT_POLICY"] = "ACTIVE"
sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
import torch  # noqa: E402

from vcrbench.core.jobs import job  # noqa: E402
from vcrbench.core.tables import read_table, write_table  # noqa: E402
from vcrbench.models import resolve_device  # noqa: E402
from vcrbench.training.adversarial import labelled_counterparts  # noqa: E402
from vcrbench.training.methods import targeted_from_groups  # noqa: E402
from vcrbench.training.scratch import (  # noqa: E402
    AUGMIX_METHODS,
    labelled_images,
    load_state,
    new_state,
    save_state,
    scratch_log,
    test_accuracy,
    train_epoch,
)
from vcrbench.training.train_config import recipe_from_workflow  # noqa: E402
from vcrbench.training.view_workers import ViewWorkers  # noqa: E402

with job(snakemake.log[0], snakemake.threads, "train_epoch") as log:
    inputs, params = snakemake.input, snakemake.params
    recipe, standard, measure = recipe_from_workflow(params.recipe)
    if inputs.groups:
        recipe = recipe.with_targeted(targeted_from_groups(
            read_table(inputs.groups), f"trained:{standard}", measure))
        log.info("targeted corruptions from REVa part 1 of trained:%s (%s): %s", standard,
                 measure, ", ".join(recipe.reva.targeted))
    epoch = int(snakemake.wildcards.epoch)
    device = resolve_device(params.device)
    images, labels = labelled_images(inputs.index, inputs.prepared, device)
    adversarial = None
    if inputs.adversarial:
        shards = ([inputs.adversarial] if isinstance(inputs.adversarial, str)
                  else list(inputs.adversarial))
        adversarial = torch.from_numpy(
            labelled_counterparts(read_table(inputs.index), shards)).to(device)
    state = new_state(recipe, device) if epoch == 1 else load_state(inputs.previous, recipe,
                                                                      device)
    # On a GPU the AugMix views are made on the CPU by the job's other threads, ahead of the
    # step (docs/cifar.md, "AugMix and REVa on a GPU"); on the CPU in the training process.
    workers = snakemake.threads - 1
    views = (ViewWorkers(workers) if device.type == "cuda" and workers >= 1
             and recipe.method in AUGMIX_METHODS else nullcontext())
    start = time.perf_counter()
    with views as pool:
        row = train_epoch(state, images, labels, adversarial=adversarial, view_workers=pool)
    seconds = time.perf_counter() - start
    row = {**row, "test_accuracy": test_accuracy(state, inputs.evaluation,
                                                 inputs.evaluation_prepared, device)}
    log.info("epoch %d/%d of %s on %s (%d images) in %.1f s: %s", epoch, recipe.epochs,
             recipe.architecture, device, len(labels), seconds, row)
    save_state(state, snakemake.output.state,
               data={"label_space": params.label_space, "side": int(images.shape[1]),
                     "name": snakemake.wildcards.trained})
    write_table(scratch_log([row]), snakemake.output.log_row)
