"""Exact, text form of result DataFrames, to compare the tables the extension hands over
against a fixture written by an earlier version (``tests/test_arrow_tables.py``).

Each column is kept with its dtype and every value spelled exactly: floats as ``float.hex``
(``nan`` for NaN), missing values of nullable columns as ``None``.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd


def _value(v: Any) -> Any:
    if v is None or v is pd.NA:
        return None
    if isinstance(v, float):
        return "nan" if math.isnan(v) else v.hex()
    if hasattr(v, "item"):  # numpy scalars
        return _value(v.item())
    return v


def frame_doc(df: pd.DataFrame) -> dict[str, Any]:
    """The frame's index, columns, dtypes and values, exactly."""
    return {
        "index": [str(df.index.dtype), len(df.index), list(map(int, df.index))],
        "columns": [
            {"name": c, "dtype": str(df[c].dtype), "values": [_value(v) for v in df[c]]}
            for c in df.columns
        ],
    }


def results_doc(res: Any) -> dict[str, Any]:
    """Every table of a ``pp.Results``."""
    names = ["flows", "links", "timeseries", "link_timeseries", "subflows"]
    names += ["subflow_timeseries", "caches"]
    return {n: frame_doc(getattr(res, n)) for n in names}
