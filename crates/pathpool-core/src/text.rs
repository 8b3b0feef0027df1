//! Positions in input files and near-miss names, for error messages that name a line and
//! column and suggest what was meant.

/// 1-based line and column (in bytes) of byte `offset` in `text`; an offset past the end is
/// the end, and one inside a multi-byte character counts from that character's start.
#[must_use]
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rfind('\n')
        .map_or(before.len(), |i| before.len() - i - 1)
        + 1;
    (line, col)
}

/// Writes `source[:line[:column]]: [path: ]message`, the one format of every error that
/// points into an input file (scenario files and overlay files alike).
///
/// # Errors
/// Those of the formatter.
pub fn write_located(
    f: &mut std::fmt::Formatter<'_>,
    source: &str,
    line: Option<usize>,
    column: Option<usize>,
    path: &str,
    message: &str,
) -> std::fmt::Result {
    f.write_str(source)?;
    if let Some(l) = line {
        write!(f, ":{l}")?;
        if let Some(c) = column {
            write!(f, ":{c}")?;
        }
    }
    f.write_str(": ")?;
    if !path.is_empty() {
        write!(f, "{path}: ")?;
    }
    f.write_str(message)
}

/// Edit distance between `a` and `b`, ignoring case: insertions, deletions, substitutions
/// and transpositions of adjacent characters each cost 1 (optimal string alignment), so
/// `form` is 1 from `from`.
#[must_use]
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().flat_map(char::to_lowercase).collect();
    let b: Vec<char> = b.chars().flat_map(char::to_lowercase).collect();
    // Three rows of the dynamic programme: i-2, i-1 and i.
    let mut two_back: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut row: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        row[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(row[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(two_back[j - 2] + 1);
            }
            row[j] = d;
        }
        std::mem::swap(&mut two_back, &mut prev);
        std::mem::swap(&mut prev, &mut row);
    }
    prev[b.len()]
}

/// The candidate nearest to `word`, if it is near enough to be what was meant: within one
/// edit for words of two to five characters, two up to eight, a third of the length beyond,
/// none for one character (a differing case counts as no edit). Two candidates equally near
/// are no suggestion: either could be meant.
#[must_use]
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let len = word.chars().count();
    let limit = match len {
        0 => return None,
        // One letter differs from every other one-letter name by one edit: only a differing
        // case is a suggestion there.
        1 => 0,
        2..=5 => 1,
        6..=8 => 2,
        n => n / 3,
    };
    let mut best: Option<(usize, &str)> = None;
    let mut tied = false;
    for c in candidates.into_iter().filter(|c| *c != word) {
        let d = edit_distance(word, c);
        if d > limit {
            continue;
        }
        match best {
            Some((b, other)) if d == b && other != c => tied = true,
            Some((b, _)) if d >= b => {}
            _ => {
                best = Some((d, c));
                tied = false;
            }
        }
    }
    best.filter(|_| !tied).map(|(_, c)| c)
}

/// An unknown key or value in a serde message ("unknown field `x`, expected one of `a`, `b`",
/// "unknown variant `x`, expected `a` or `b`", ...), with the name it most likely meant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownName<'a> {
    /// Whether the name is a key (`field`) or a value (`variant`).
    pub is_field: bool,
    /// The name given.
    pub name: &'a str,
    /// The names allowed there.
    pub expected: Vec<&'a str>,
    /// What the message says is allowed (`expected one of ...`, `there are no fields`).
    pub allowed: &'a str,
    /// The allowed name nearest to `name`, if it is near enough.
    pub meant: Option<&'a str>,
}

impl<'a> UnknownName<'a> {
    /// Reads a serde message; `None` for other messages.
    #[must_use]
    pub fn parse(message: &'a str) -> Option<Self> {
        let (is_field, rest) = if let Some(r) = message.strip_prefix("unknown field `") {
            (true, r)
        } else {
            (false, message.strip_prefix("unknown variant `")?)
        };
        let (name, rest) = rest.split_once('`')?;
        let allowed = rest.trim_start_matches(',').trim();
        // Every name in backticks after the unknown one: serde writes `a`, `a` or `b`, or
        // one of `a`, `b`, `c`.
        let expected: Vec<&str> = allowed.split('`').skip(1).step_by(2).collect();
        let meant = closest(name, expected.iter().copied());
        Some(UnknownName {
            is_field,
            name,
            expected,
            allowed,
            meant,
        })
    }

    /// The message for people, when the error's path already names an unknown key: `unknown
    /// field (did you mean `from`?); expected one of ...` (for a value, `unknown value `x``).
    #[must_use]
    pub fn message(&self) -> String {
        let mut m = if self.is_field {
            "unknown field".to_string()
        } else {
            format!("unknown value `{}`", self.name)
        };
        if let Some(meant) = self.meant {
            m.push_str(&format!(" (did you mean `{meant}`?)"));
        }
        if !self.allowed.is_empty() {
            m.push_str("; ");
            m.push_str(self.allowed);
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::{closest, edit_distance, line_col, UnknownName};

    #[test]
    fn unknown_names_in_serde_messages_get_a_suggestion() {
        let u = UnknownName::parse("unknown field `form`, expected one of `from`, `to`").unwrap();
        assert_eq!((u.is_field, u.name, u.meant), (true, "form", Some("from")));
        assert_eq!(
            u.message(),
            "unknown field (did you mean `from`?); expected one of `from`, `to`"
        );
        let v = UnknownName::parse("unknown variant `tpc`, expected one of `tcp`, `mmtp`").unwrap();
        assert_eq!(
            v.message(),
            "unknown value `tpc` (did you mean `tcp`?); expected one of `tcp`, `mmtp`"
        );
        let two =
            UnknownName::parse("unknown variant `per-akc`, expected `per-ack` or `on-change`")
                .unwrap();
        assert_eq!(two.expected, ["per-ack", "on-change"]);
        assert_eq!(
            two.message(),
            "unknown value `per-akc` (did you mean `per-ack`?); expected `per-ack` or `on-change`"
        );
        assert!(UnknownName::parse("missing field `from`").is_none());
    }

    #[test]
    fn near_misses_are_found_and_far_ones_are_not() {
        assert_eq!(edit_distance("form", "from"), 1, "a transposition");
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("Mbps", "mbps"), 0, "case is ignored");
        assert_eq!(edit_distance("", "abc"), 3);
        let fields = ["id", "kind", "from", "to", "start", "size", "count"];
        assert_eq!(closest("form", fields), Some("from"));
        assert_eq!(closest("strat", fields), Some("start"));
        assert_eq!(closest("colour", fields), None);
        assert_eq!(
            closest("to", fields),
            None,
            "an exact match is no suggestion"
        );
        assert_eq!(
            closest("r9", ["r1", "r2", "s1"]),
            None,
            "a tie suggests nothing"
        );
        assert_eq!(closest("r9", ["r1", "s2"]), Some("r1"));
        assert_eq!(
            closest("delayed_acks", ["delayed_ack", "delack_timeout"]),
            Some("delayed_ack")
        );
    }

    #[test]
    fn lines_and_columns_count_from_one() {
        assert_eq!(line_col("ab\ncd\nef", 4), (2, 2));
        assert_eq!(line_col("ab", 0), (1, 1));
        assert_eq!(line_col("ab\n", 3), (2, 1));
        assert_eq!(line_col("ab", 99), (1, 3));
        assert_eq!(line_col("é\nx", 1), (1, 1), "inside a character");
    }
}
