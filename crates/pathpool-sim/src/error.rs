//! Where a problem in a scenario is and what it is: the path of a field (`links[2].rate`), the
//! compiler's error at such a path, and the error shown to people (file, line, column, field,
//! message). Every stage of reading and compiling a scenario uses these, so they live apart
//! from all of them.

use std::fmt;

/// One step of a path into the scenario document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathSeg {
    /// A table key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// Formats a path the way users write it: `links[2].between[1]`.
#[must_use]
pub fn format_path(path: &[PathSeg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            PathSeg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            PathSeg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// A problem with a scenario: where (file, line, column, field) and what, including what
/// would have been allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// File name (or `<scenario>` for scenarios built in code).
    pub source: String,
    /// 1-based line, when the source is a file and the field could be located.
    pub line: Option<usize>,
    /// 1-based column.
    pub column: Option<usize>,
    /// The field, as `links[2].rate` (empty for the whole document).
    pub path: String,
    /// What is wrong and what is allowed.
    pub message: String,
    /// The other problems found in the same scenario, in file order after this one (at most
    /// [`MAX_ERRORS`] in all). Their own `also` is empty.
    pub also: Box<[ScenarioError]>,
}

/// The most problems reported for one scenario.
pub const MAX_ERRORS: usize = 20;

impl ScenarioError {
    /// This problem and the others found with it, one per line in `Display`.
    pub fn all(&self) -> impl Iterator<Item = &ScenarioError> {
        std::iter::once(self).chain(self.also.iter())
    }

    fn fmt_one(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        pathpool_core::text::write_located(
            f,
            &self.source,
            self.line,
            self.column,
            &self.path,
            &self.message,
        )
    }

    /// Several problems as one error: in file order, at most [`MAX_ERRORS`], the rest counted
    /// in a last line. Problems without a line (a scenario built in code) go in the order of a
    /// scenario file's sections, then in the order found.
    pub(crate) fn combine(mut errors: Vec<ScenarioError>) -> ScenarioError {
        const SECTIONS: [&str; 15] = [
            "name",
            "description",
            "duration",
            "seed",
            "nodes",
            "links",
            "host_groups",
            "flows",
            "traffic",
            "caches",
            "tcp",
            "tfrc",
            "measure",
            "routing",
            "generate",
        ];
        let section = |e: &ScenarioError| {
            let first = e.path.split(['.', '[']).next().unwrap_or("");
            SECTIONS
                .iter()
                .position(|s| *s == first)
                .unwrap_or(SECTIONS.len())
        };
        errors.sort_by_key(|e| (e.line.is_none(), e.line, e.column, section(e)));
        errors.dedup();
        if errors.len() > MAX_ERRORS {
            let more = errors.len() - MAX_ERRORS;
            errors.truncate(MAX_ERRORS);
            let source = errors[0].source.clone();
            errors.push(ScenarioError {
                source,
                line: None,
                column: None,
                path: String::new(),
                message: format!("... and {more} more problems"),
                also: Box::default(),
            });
        }
        let mut first = errors.remove(0);
        first.also = errors.into_boxed_slice();
        first
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_one(f)?;
        for e in self.also.iter() {
            f.write_str("\n")?;
            e.fmt_one(f)?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}

/// An error found while compiling a valid document: a field path and a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// Where.
    pub path: Vec<PathSeg>,
    /// What.
    pub message: String,
}

impl SpecError {
    /// An error at `path`.
    pub fn at(path: Vec<PathSeg>, message: impl Into<String>) -> Self {
        SpecError {
            path,
            message: message.into(),
        }
    }
}
