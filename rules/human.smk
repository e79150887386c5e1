# Human data: Δv of the experiments' conditions, human curves, and HMRI / MRSI of every model.


rule human_stimuli:
    input:
        index=rules.index.output.index,
        trials=human_data_files,
    output:
        stimuli=f"{RESULTS}/human/{{corruption}}-stimuli.parquet",
    params:
        entry=human_entry,
        seed=config["seed"],
        vif=config["vif"],
    log:
        f"{RESULTS}/logs/human/{{corruption}}-stimuli.log",
    benchmark:
        f"{RESULTS}/benchmarks/human/{{corruption}}-stimuli.tsv"
    threads: config["threads"]["score"]
    resources:
        mem_mb=3000,
        runtime=60,
    conda:
        "../envs/vision.yaml"
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
    params:
        entry=human_entry,
        source=lambda wildcards: source_name(HUMAN[wildcards.corruption]),
        binning=config["binning"],
        bootstrap=config["bootstrap"],
        seed=config["seed"],
    log:
        f"{RESULTS}/logs/human/{{corruption}}-curves.log",
    threads: config["threads"]["estimate"]
    resources:
        mem_mb=2000,
        runtime=30,
    conda:
        "../envs/stats.yaml"
    script:
        "../workflow_scripts/human_curves.py"


rule compare_human:
    input:
        curves=rules.curves.output.curves,
        replicates=rules.curves.output.replicates,
        human=human_curve_of(""),
        human_replicates=human_curve_of("-replicates"),
    output:
        metrics=f"{RESULTS}/metrics/{{model}}/{{corruption}}-human.parquet",
    params:
        model=model_name,
        source=lambda wildcards: HUMAN_FOR[wildcards.corruption][1],
    log:
        f"{RESULTS}/logs/human/compare-{{model}}-{{corruption}}.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/stats.yaml"
    script:
        "../workflow_scripts/compare_human.py"


rule human_similarity:
    input:
        curves=expand(f"{RESULTS}/human/{{corruption}}.parquet", corruption=HUMAN),
        discrimination=[config["human_discrimination"]] if config["human_discrimination"] else [],
    output:
        curves=f"{RESULTS}/human/similarity/curves.parquet",
        curve_groups=f"{RESULTS}/human/similarity/curve-groups.parquet",
        discrimination=f"{RESULTS}/human/similarity/discrimination.parquet",
        discrimination_groups=f"{RESULTS}/human/similarity/discrimination-groups.parquet",
    params:
        corruptions=list(HUMAN),
    log:
        f"{RESULTS}/logs/human/similarity.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/stats.yaml"
    script:
        "../workflow_scripts/human_similarity.py"
