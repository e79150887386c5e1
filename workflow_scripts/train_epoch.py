"""Rule train_epoch: one epoch of one train entry, from random initialisation (epoch 1) or the
previous epoch's state, then its accuracy on the run's evaluation images. A REVa entry also
reads its PGD counterparts and (targeted: auto) REVa part 1's groups of its standard model.
Everything runs under ``if __name__ == "__main__"``: the AugMix view workers are spawned
processes, which run this file again (as ``__mp_main__``)."""

import os
import sys
import time
from contextlib import nullcontext
from pathlib import Path

# Spawned AugMix view workers run this file again as __mp_main__, without the snakemake
# object: everything below happens in the job's own process only.
if __name__ == "__main__":
    # A training epoch has its cores to itself (threads: train): busy-waiting OpenMP threads train
    # fastnet a third faster than the passive ones rules/common.smk asks for jobs that share cores
    # (84 against 116 s an epoch on the 2 development cores, the same weights). Set before torch
    # loads its OpenMP runtime.
    os.environ["OMP_WAIT_POLICY"] = "ACTIVE"
    sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))
    import torch

    from vcrbench.core.jobs import job
    from vcrbench.core.tables import read_table, write_table
    from vcrbench.models import resolve_device
    from vcrbench.training.adversarial import labelled_counterparts
    from vcrbench.training.methods import targeted_from_groups
    from vcrbench.training.scratch import (
        AUGMIX_METHODS,
        labelled_images,
        load_state,
        new_state,
        save_state,
        scratch_log,
        test_accuracy,
        train_epoch,
    )
    from vcrbench.training.train_config import recipe_from_workflow
    from vcrbench.training.view_workers import ViewWorkers, view_worker_count


def main() -> None:
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
        # The AugMix views: on a GPU made on the CPU by the job's other threads, ahead of the
        # step (threads.train_views; docs/cifar.md, "AugMix and REVa on a GPU")
        workers = (view_worker_count(params.view_workers, snakemake.threads, device.type)
                   if recipe.method in AUGMIX_METHODS else 0)
        if workers:
            torch.set_num_threads(max(1, snakemake.threads - workers))
            log.info("AugMix views made by %d worker processes; training on %d threads",
                     workers, torch.get_num_threads())
        views = ViewWorkers(workers) if workers else nullcontext()
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


if __name__ == "__main__":
    main()
