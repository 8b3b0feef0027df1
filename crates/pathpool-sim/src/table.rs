//! Tidy column tables: what results are made of, whatever they are written to (Parquet,
//! pandas, the terminal).

/// A column of one value per row: `get` reads it, `kind` (`Column::U64`, …) wraps the values.
pub(crate) fn column<R, T>(
    rows: &[R],
    kind: fn(Vec<T>) -> Column,
    get: impl Fn(&R) -> T,
) -> Column {
    kind(rows.iter().map(get).collect())
}

/// One column of values.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    /// Floats (NaN and infinities allowed).
    F64(Vec<f64>),
    /// Optional floats (null where absent).
    OptF64(Vec<Option<f64>>),
    /// Unsigned integers.
    U64(Vec<u64>),
    /// Optional unsigned integers.
    OptU64(Vec<Option<u64>>),
    /// Text.
    Str(Vec<String>),
    /// Optional text.
    OptStr(Vec<Option<String>>),
    /// Booleans.
    Bool(Vec<bool>),
    /// Optional booleans.
    OptBool(Vec<Option<bool>>),
}

impl Column {
    /// Number of rows.
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::OptF64(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::OptU64(v) => v.len(),
            Column::Str(v) => v.len(),
            Column::OptStr(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::OptBool(v) => v.len(),
        }
    }
    /// Whether the column has no rows.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A named table of equally long columns.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// Table name (`flows`, `links`, `flow_timeseries`, `link_timeseries`).
    pub name: String,
    /// Columns in order.
    pub columns: Vec<(String, Column)>,
}

impl Table {
    /// An empty table.
    #[must_use]
    pub fn new(name: &str) -> Self {
        Table {
            name: name.to_string(),
            columns: Vec::new(),
        }
    }
    /// Appends a column; all columns must have the same length.
    ///
    /// # Panics
    /// If the column's length differs from the others'.
    pub fn push(&mut self, name: &str, col: Column) {
        if let Some((_, first)) = self.columns.first() {
            assert_eq!(
                first.len(),
                col.len(),
                "column {name} of table {}",
                self.name
            );
        }
        self.columns.push((name.to_string(), col));
    }
    /// Number of rows.
    #[must_use]
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }
    /// A column by name.
    #[must_use]
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }
    /// The column `name` if it holds floats.
    #[must_use]
    pub fn f64s(&self, name: &str) -> Option<&[f64]> {
        match self.column(name)? {
            Column::F64(v) => Some(v),
            _ => None,
        }
    }
    /// The column `name` if it holds unsigned integers.
    #[must_use]
    pub fn u64s(&self, name: &str) -> Option<&[u64]> {
        match self.column(name)? {
            Column::U64(v) => Some(v),
            _ => None,
        }
    }
    /// The column `name` if it holds text.
    #[must_use]
    pub fn strs(&self, name: &str) -> Option<&[String]> {
        match self.column(name)? {
            Column::Str(v) => Some(v),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_columns_by_name_and_none_for_another_type() {
        let mut t = Table::new("t");
        t.push("x", Column::F64(vec![1.5]));
        t.push("n", Column::U64(vec![2]));
        t.push("s", Column::Str(vec!["a".into()]));
        assert_eq!(t.f64s("x"), Some(&[1.5][..]));
        assert_eq!(t.u64s("n"), Some(&[2][..]));
        assert_eq!(t.strs("s").map(|s| s[0].as_str()), Some("a"));
        assert_eq!(t.f64s("n"), None);
        assert_eq!(t.u64s("missing"), None);
    }
}
