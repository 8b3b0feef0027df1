//! Positions in input files, for error messages that name a line and column.

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

#[cfg(test)]
mod tests {
    use super::line_col;

    #[test]
    fn lines_and_columns_count_from_one() {
        assert_eq!(line_col("ab\ncd\nef", 4), (2, 2));
        assert_eq!(line_col("ab", 0), (1, 1));
        assert_eq!(line_col("ab\n", 3), (2, 1));
        assert_eq!(line_col("ab", 99), (1, 3));
        assert_eq!(line_col("é\nx", 1), (1, 1), "inside a character");
    }
}
