"""The robustness properties of a model: a metric in a label space, and one way to select them.

A *property* is a pair ``(metric, classes)``: ``metric`` is ``accuracy`` (the prediction equals
the label, f(x′) = y) or ``consistency`` (it equals the prediction on the clean image,
f(x′) = f(x)); ``classes`` is 1000 (ImageNet-1k top-1) or 16 (the 16 entry-level categories
of the human experiments). Every curve, rate and metric table has the columns ``metric`` and
``classes``; :func:`select` is how a table's rows of one property are taken.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

METRICS = ("accuracy", "consistency")
#: Every property, in the order tables list them.
PROPERTIES: tuple[tuple[str, int], ...] = (
    ("accuracy", 1000),
    ("consistency", 1000),
    ("accuracy", 16),
    ("consistency", 16),
)
#: Humans answer in the 16-class space: the properties a human curve can have.
HUMAN_CLASSES = 16


def select(table: pa.Table, metric: str, classes: int) -> pa.Table:
    """The rows of ``table`` (columns ``metric``, ``classes``) that belong to one property."""
    mask = pc.and_(
        pc.equal(table.column("metric"), metric), pc.equal(table.column("classes"), classes)
    )
    return table.filter(mask)


def chance_level(classes: int) -> float:
    """``1 / classes``: accuracy (and consistency) of a prediction that carries no information
    about the image, on class-balanced images — the value at Δv = 1, where no visual information
    is left (the right-end anchor of :mod:`vcrbench.curves.bootstrap`)."""
    return 1.0 / int(classes)
