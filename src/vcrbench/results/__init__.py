"""Results as data: the tables of one or several results folders as polars frames, for
comparing runs and models in one Python call (and ``vcrbench results`` on the command line).

:mod:`~vcrbench.results.catalogue` names every table of a run (where it lies, the rule that
makes it); :mod:`~vcrbench.results.runs` opens folders and reads or scans a table across them
with a ``run`` column (:func:`open_runs`); :mod:`~vcrbench.results.where` parses the text
filters of ``--where``; :mod:`~vcrbench.results.views` puts runs or models side by side and
writes Markdown (values with their intervals), CSV, JSON or Parquet. Reading only: nothing here
writes into a results folder.

May import: :mod:`vcrbench.core` and :mod:`vcrbench.vcr` (the coverage table's schema, for its
CSV); polars and pyarrow.
"""

from vcrbench.results.catalogue import TABLES, TableSpec
from vcrbench.results.runs import Run, Runs, open_runs

__all__ = ["TABLES", "Run", "Runs", "TableSpec", "open_runs"]
