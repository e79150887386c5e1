"""The robustness properties of a model: a metric in a label space, and one way to select them.

A *property* is a pair ``(metric, classes)``: ``metric`` is ``accuracy`` (the prediction equals
the label, f(x′) = y) or ``consistency`` (it equals the prediction on the clean image,
f(x′) = f(x)); ``classes`` is the size of the data set's own label space (1000, ImageNet-1k
top-1; 10 or 100 for CIFAR) or 16 (the 16 entry-level categories of the human experiments, for
ImageNet labels only). Every curve, rate and metric table has the columns ``metric`` and
``classes``; :func:`select` is how a table's rows of one property are taken.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

METRICS = ("accuracy", "consistency")
#: Humans answer in the 16-class space: the properties a human curve can have.
HUMAN_CLASSES = 16
#: ImageNet-1k, the label space of every property table before CIFAR.
IMAGENET_CLASSES = 1000


def properties(classes: int = IMAGENET_CLASSES) -> tuple[tuple[str, int], ...]:
    """Every property of a run whose labels have ``classes`` classes, in table order: both
    metrics in that space, then (ImageNet only) both in the 16-class space."""
    own = (("accuracy", int(classes)), ("consistency", int(classes)))
    if int(classes) != IMAGENET_CLASSES:
        return own
    return (*own, ("accuracy", HUMAN_CLASSES), ("consistency", HUMAN_CLASSES))


#: Every property of an ImageNet run, in the order tables list them.
PROPERTIES: tuple[tuple[str, int], ...] = properties(IMAGENET_CLASSES)


def table_properties(*tables: pa.Table) -> list[tuple[str, int]]:
    """The properties with rows in any of ``tables`` (columns ``metric``, ``classes``), in
    table order: the label space's own (any count but 16) before the 16-class ones, accuracy
    before consistency."""
    found = {(m, int(c)) for t in tables if t is not None and t.num_rows
             for m, c in zip(t.column("metric").to_pylist(), t.column("classes").to_pylist(),
                             strict=True)}
    return sorted(found, key=lambda p: (p[1] == HUMAN_CLASSES, METRICS.index(p[0]), p[1]))


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
