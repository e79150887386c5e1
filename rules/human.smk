# Human data: the Δv of the experiments' conditions, the human curves, and which corruptions
# are visually similar (overlapping human curves, same/different trials). HMRI / MRSI of the
# models against these curves are computed with the summary (rules/summary.smk).


include: "functions/human.smk"


rule human_stimuli:
    input:
        index=rules.index.output.index,
        trials=human_data_files,
    output:
        stimuli=f"{RESULTS}/human/{{corruption}}-stimuli.parquet",
    log:
        f"{RESULTS}/logs/human/{{corruption}}-stimuli.log",
    benchmark:
        f"{RESULTS}/benchmarks/human/{{corruption}}-stimuli.tsv"
    conda:
        "../envs/vision.yaml"
    threads: config["threads"]["score"]
    resources:
        mem_mb=3000,
        runtime=60,
    params:
        entry=human_entry,
        seed=config["seed"],
        vif=config["vif"],
    script:
        "../workflow_scripts/human_stimuli.py"


rule human_curves:
    input:
        trials=human_data_files,
        stimuli=human_stimuli_input,
    output:
        curves=f"{RESULTS}/human/{{corruption}}.parquet",
        replicates=f"{RESULTS}/human/{{corruption}}-replicates.parquet",
        rates=f"{RESULTS}/human/{{corruption}}-rates.parquet",
        metrics=f"{RESULTS}/human/{{corruption}}-metrics.parquet",
        conditions=f"{RESULTS}/human/{{corruption}}-conditions.parquet",
    log:
        f"{RESULTS}/logs/human/{{corruption}}-curves.log",
    conda:
        "../envs/stats.yaml"
    threads: config["threads"]["estimate"]
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        entry=human_entry,
        source=human_source_name,
        binning=config["binning"],
        bootstrap=config["bootstrap"],
        seed=config["seed"],
    script:
        "../workflow_scripts/human_curves.py"


rule human_similarity:
    input:
        curves=list(human_curve_tables().values()),
        replicates=list(human_curve_tables("-replicates").values()),
        metrics=list(human_curve_tables("-metrics").values()),
        discrimination=[config["human_discrimination"]] if config["human_discrimination"] else [],
    output:
        curves=f"{RESULTS}/human/similarity/curves.parquet",
        curve_groups=f"{RESULTS}/human/similarity/curve-groups.parquet",
        discrimination=f"{RESULTS}/human/similarity/discrimination.parquet",
        discrimination_groups=f"{RESULTS}/human/similarity/discrimination-groups.parquet",
    log:
        f"{RESULTS}/logs/human/similarity.log",
    conda:
        "../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        curves=human_curve_tables(),
        replicates=human_curve_tables("-replicates"),
        metrics=human_curve_tables("-metrics"),
    script:
        "../workflow_scripts/human_similarity.py"


use rule figure_base as figure_human_similarity with:
    input:
        curves=list(human_curve_tables().values()),
        groups=rules.human_similarity.output.curve_groups,
    output:
        figures=report_figures(
            "human-similarity", "Human comparison", "human curves by similarity class"
        ),
    log:
        f"{RESULTS}/logs/figures/human-similarity.log",
    params:
        script="figure_human_similarity",
        curves=human_curve_tables(),
