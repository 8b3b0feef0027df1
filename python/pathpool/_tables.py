"""Result tables from the extension: Arrow, read from Parquet bytes, into DataFrames.

The extension encodes each table with the same Parquet writer as the result files (D205),
so a column's Arrow type and nullability are those of the files: ``double``, ``uint64``,
``bool`` or ``string``, nullable where the value can be absent. The DataFrame columns keep
that distinction, as :attr:`pathpool.Results.flows` always has: an optional count is a
nullable ``UInt64`` column and an optional flag a ``boolean`` one, even when no value is
missing in this run, so a column's dtype does not depend on the run; an optional float is
``float64`` with NaN; strings are ``object`` columns with ``None`` where absent.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


def _column(col: Any, field: Any) -> Any:
    """One DataFrame column from an Arrow ``ChunkedArray`` and its schema field."""
    import pyarrow as pa

    t = field.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pd.array(col.to_numpy(zero_copy_only=False), dtype=object)
    if not field.nullable:
        return np.array(col.to_numpy(), copy=True)
    if pa.types.is_floating(t):
        return np.array(col.to_numpy(), dtype=np.float64, copy=True)
    missing = np.array(col.is_null().to_numpy(), dtype=bool)
    if pa.types.is_boolean(t):
        values = np.array(col.fill_null(False).to_numpy(), dtype=bool)
        return pd.arrays.BooleanArray(values, missing)
    if pa.types.is_unsigned_integer(t):
        values = np.array(col.fill_null(0).to_numpy(), dtype=np.uint64)
        return pd.arrays.IntegerArray(values, missing)
    raise TypeError(f"column {field.name}: unexpected Arrow type {t}")


def frame(parquet: bytes) -> pd.DataFrame:
    """The DataFrame of one table the extension encoded as Parquet."""
    # Imported on first use: the `pathpool` command (overlay nodes, the testbed) imports the
    # package without reading any table, and pyarrow.parquet takes a second to import.
    import pyarrow as pa
    import pyarrow.parquet as pq

    # One small file in memory: `ParquetFile.read` without threads, not `read_table`, whose
    # dataset machinery and thread pool cost several milliseconds per table.
    table = pq.ParquetFile(pa.py_buffer(parquet)).read(use_threads=False)
    return pd.DataFrame({f.name: _column(table.column(i), f) for i, f in enumerate(table.schema)})
