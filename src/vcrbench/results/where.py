"""Row filters written as text, ``COLUMN OP VALUE``, for ``vcrbench results --where``: no code
is evaluated, a value is parsed as the column's own type.

Operators: ``=`` (one of the comma-separated values), ``!=`` (none of them), ``<``, ``<=``,
``>``, ``>=`` (one value; numbers). The value ``null`` means a missing value (``note=null``:
no note; ``R!=null``: R reported). Several conditions must all hold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from vcrbench.errors import VcrbenchError

_CONDITION = re.compile(r"^\s*(?P<column>[A-Za-z_][A-Za-z0-9_]*)\s*(?P<op>!=|<=|>=|=|<|>)"
                        r"(?P<value>.*)$", re.S)
_ORDER = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


@dataclass(frozen=True)
class Condition:
    """``column op values``: ``values`` are the texts after the operator (several only for
    ``=`` / ``!=``)."""

    column: str
    op: str
    values: tuple[str, ...]

    @property
    def text(self) -> str:
        return f"{self.column}{self.op}{','.join(self.values)}"

    def expression(self, schema: pl.Schema) -> pl.Expr:
        """The polars expression of this condition on a frame of ``schema``."""
        if self.column not in schema:
            raise VcrbenchError(f"--where {self.text}: no column {self.column!r}; columns: "
                                f"{', '.join(schema.names())}")
        dtype = schema[self.column]
        column = pl.col(self.column)
        if self.op in _ORDER:
            if not dtype.is_numeric():
                raise VcrbenchError(f"--where {self.text}: {self.op} needs a numeric column, "
                                    f"{self.column} is {dtype}")
            return getattr(column, _ORDER[self.op])(self._value(self.values[0], dtype))
        nulls = "null" in self.values
        values = [self._value(v, dtype) for v in self.values if v != "null"]
        match = column.is_in(values) if values else pl.lit(False)
        if nulls:
            match = match | column.is_null()
        return match if self.op == "=" else ~match.fill_null(False)

    def _value(self, text: str, dtype: pl.DataType) -> object:
        try:
            if dtype == pl.Boolean:
                if text.lower() not in ("true", "false"):
                    raise ValueError(text)
                return text.lower() == "true"
            if dtype.is_integer():
                return int(text)
            if dtype.is_float():
                return float(text)
        except ValueError:
            raise VcrbenchError(f"--where {self.text}: {text!r} is not a value of "
                                f"{self.column} ({dtype})") from None
        if dtype not in (pl.String, pl.Categorical):
            raise VcrbenchError(f"--where {self.text}: cannot filter a {dtype} column")
        return text


def parse_condition(text: str) -> Condition:
    """One ``COLUMN OP VALUE`` condition (module docstring)."""
    found = _CONDITION.match(text)
    if not found or not found["value"].strip():
        raise VcrbenchError(f"--where {text!r}: write COLUMN=VALUE, COLUMN!=VALUE or COLUMN<VALUE "
                            "(<, <=, >, >=), e.g. corruption=gaussian_noise or R<0.5")
    op, value = found["op"], found["value"].strip()
    values = tuple(v.strip() for v in value.split(",")) if op in ("=", "!=") else (value,)
    if op in _ORDER and value == "null":
        raise VcrbenchError(f"--where {text!r}: {op} cannot compare with null")
    return Condition(found["column"], op, values)


def parse_conditions(texts: list[str] | tuple[str, ...]) -> list[Condition]:
    """Every condition of ``--where`` (all must hold)."""
    return [parse_condition(t) for t in texts]


def apply_conditions(frame: pl.LazyFrame, conditions: list[Condition]) -> pl.LazyFrame:
    """``frame`` filtered to the rows where every condition holds."""
    schema = frame.collect_schema()
    for condition in conditions:
        frame = frame.filter(condition.expression(schema))
    return frame


def key_values(conditions: list[Condition], column: str) -> list[str] | None:
    """The values that ``column=…`` conditions allow (intersected), None where none restricts
    it: what lets a scan open only the files of those models / corruptions."""
    allowed: set[str] | None = None
    for c in conditions:
        if c.column == column and c.op == "=" and "null" not in c.values:
            allowed = set(c.values) if allowed is None else allowed & set(c.values)
    return None if allowed is None else sorted(allowed)
