# vcrbench: visually-continuous corruption robustness of image classifiers, compared with humans.
# Targets: all (default), figures, retraining, overlap, reva, train.
# See README.md and docs/architecture.md.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config.yaml"


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/figure_base.smk"
include: "rules/data.smk"
include: "rules/corrupt.smk"
include: "rules/infer.smk"
include: "rules/imagenet_c.smk"
include: "rules/human.smk"
include: "rules/estimate.smk"
include: "rules/summary.smk"
include: "rules/finetune.smk"
include: "rules/train.smk"
include: "rules/overlap.smk"
include: "rules/reva.smk"


rule all:
    default_target: True
    input:
        train_outputs(),
        summary_outputs(),
        similarity_outputs(),
        curve_figures(),
        dv_histogram_figures(),
        summary_figures(),
        human_figures(),
        retraining_outputs(),
        overlap_outputs(),
        reva_outputs(),


rule figures:
    input:
        curve_figures(),
        dv_histogram_figures(),
        summary_figures(),
        human_figures(),
        reva_figures(),


rule retraining:
    input:
        retraining_outputs(),


rule train:
    input:
        train_outputs(),


rule overlap:
    input:
        overlap_outputs(),


rule reva:
    input:
        reva_outputs(),
