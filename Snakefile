# vcrbench: visually-continuous corruption robustness of image classifiers, compared with humans.
# Targets: all (default), figures, retraining, overlap. See README.md.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config.yaml"


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/corrupt.smk"
include: "rules/finetune.smk"
include: "rules/infer.smk"
include: "rules/imagenet_c.smk"
include: "rules/estimate.smk"
include: "rules/human.smk"
include: "rules/report.smk"
include: "rules/overlap.smk"


rule all:
    default_target: True
    input:
        all_outputs(),


rule figures:
    input:
        figure_outputs(),


rule retraining:
    input:
        retraining_outputs(),


rule overlap:
    input:
        overlap_outputs(),
