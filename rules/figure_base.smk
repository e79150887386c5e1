# The base of every figure rule: `use rule figure_base as figure_<x> with:` sets its input,
# output, log and params (at least `script`, the rule's own name). A figure is a light job that
# reads cached tables only and runs workflow_scripts/<params.script>.py. The base's own output is
# never requested, so it never runs as a job itself.
rule figure_base:
    output:
        f"{RESULTS}/figures/.figure-base",
    log:
        f"{RESULTS}/logs/figures/figure-base.log",
    conda:
        "../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        script="figure_base",
    script:
        "../workflow_scripts/{params.script}.py"
