"""Core: what every stage of the pipeline stands on, and nothing about images or papers.

Files (:mod:`~vcrbench.core.files`: the one atomic write), tables (:mod:`~vcrbench.core.tables`:
Parquet, CSV and Markdown), keyed randomness (:mod:`~vcrbench.core.seeding`: every stream a
named constant, no torch; :mod:`~vcrbench.core.philox`: counter-based draws in torch, the same on
every device and in any batch), the robustness properties and their one ``select``
(:mod:`~vcrbench.core.properties`), shards (:mod:`~vcrbench.core.shards`) and the frame of a
workflow job (:mod:`~vcrbench.core.jobs`: log, threads, user errors), and where a finished
run's time went (:mod:`~vcrbench.core.job_costs`: its jobs' benchmark files and Snakemake log).

May import: :mod:`vcrbench.errors` and third-party packages (numpy, pyarrow) only.
"""
