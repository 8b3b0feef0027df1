//! Every problem of a scenario at once, with suggestions (issue 16).
//!
//! Deserialising stops at the first problem, so the document is checked again and again: each
//! time a problem is recorded and repaired in a copy of the document, just enough to go on —
//! a misspelt key is renamed to the key it most likely meant, a misspelt value replaced by its
//! suggestion, an unknown key or an unusable value removed — until the copy deserialises or a
//! problem cannot be repaired (a missing required field, or one whose absence a removal
//! caused). The repaired copy is never run: it only lets the rest of the document be checked,
//! semantics included when every repair was a rename or a suggestion (a removed value could
//! otherwise cause a problem the user did not make).

use crate::error::{PathSeg, MAX_ERRORS};
use crate::spec::{NotTaken, Scenario};

/// A schema problem: where it is (the value, or the unknown key itself) and what.
#[derive(Clone, Debug)]
pub(crate) struct SchemaProblem {
    /// The path of the value at fault (for an unknown key, the key).
    pub(crate) at: Vec<PathSeg>,
    /// What is wrong, with a suggestion when there is one.
    pub(crate) message: String,
}

/// The outcome of checking a document that does not deserialise.
pub(crate) struct Checked {
    /// The problems, in the order they were found.
    pub(crate) problems: Vec<SchemaProblem>,
    /// The repaired scenario, when it deserialised after renames and suggestions only.
    pub(crate) repaired: Option<Box<Scenario>>,
}

/// `` `name` `` in a serde message: the text between the first pair of backticks after
/// `prefix`.
fn quoted_after<'a>(message: &'a str, prefix: &str) -> Option<&'a str> {
    message.strip_prefix(prefix)?.split('`').next()
}

/// What a message suggests the value was meant to be: `did you mean "X"?` (the unit parsers
/// and the controller names write it so).
fn suggested_value(message: &str) -> Option<&str> {
    let rest = message.split_once("did you mean \"")?.1;
    rest.split_once("\"?").map(|(v, _)| v)
}

/// How the copy of the document was changed to go on.
enum Repair {
    /// Renamed a key or replaced a value by its suggestion: the document says what was meant.
    Meant,
    /// Removed a value: what depends on it can no longer be checked.
    Removed(Vec<PathSeg>),
    /// Nothing to do: stop.
    Stop,
}

fn value_at<'a>(v: &'a mut toml::Value, path: &[PathSeg]) -> Option<&'a mut toml::Value> {
    let Some((first, rest)) = path.split_first() else {
        return Some(v);
    };
    let next = match first {
        PathSeg::Key(k) => v.as_table_mut()?.get_mut(k.as_str())?,
        PathSeg::Index(i) => v.as_array_mut()?.get_mut(*i)?,
    };
    value_at(next, rest)
}

fn table_at<'a>(table: &'a mut toml::Table, path: &[PathSeg]) -> Option<&'a mut toml::Table> {
    let Some((first, rest)) = path.split_first() else {
        return Some(table);
    };
    let PathSeg::Key(k) = first else {
        return None;
    };
    value_at(table.get_mut(k.as_str())?, rest)?.as_table_mut()
}

/// Removes the value at `path`; a value inside an array takes the whole array with it (removing
/// one element would renumber the others). Returns the path actually removed.
fn remove(table: &mut toml::Table, path: &[PathSeg]) -> Option<Vec<PathSeg>> {
    let last_key = path.iter().rposition(|s| matches!(s, PathSeg::Key(_)))?;
    let PathSeg::Key(k) = &path[last_key] else {
        return None;
    };
    table_at(table, &path[..last_key])?.remove(k.as_str())?;
    Some(path[..=last_key].to_vec())
}

fn set(table: &mut toml::Table, path: &[PathSeg], value: toml::Value) -> bool {
    let Some((last, parent)) = path.split_last() else {
        return false;
    };
    match last {
        PathSeg::Key(k) => table_at(table, parent).is_some_and(|t| {
            t.insert(k.clone(), value);
            true
        }),
        PathSeg::Index(i) => {
            let Some((PathSeg::Key(k), grand)) = parent.split_last() else {
                return false;
            };
            table_at(table, grand)
                .and_then(|t| t.get_mut(k.as_str()))
                .and_then(toml::Value::as_array_mut)
                .and_then(|a| a.get_mut(*i))
                .map(|slot| *slot = value)
                .is_some()
        }
    }
}

/// Records the problem of one failed deserialisation and repairs the copy.
fn repair(table: &mut toml::Table, path: Vec<PathSeg>, message: &str) -> (SchemaProblem, Repair) {
    let key = |k: &str| PathSeg::Key(k.to_string());
    if let Some(not_taken) = NotTaken::parse(message) {
        // The path ends at the field when the flow's `kind` was read before it, else at the
        // flow (crate::spec::flow).
        let mut parent = path;
        if parent.last() == Some(&key(not_taken.field)) {
            parent.pop();
        }
        let mut at = parent.clone();
        at.push(key(not_taken.field));
        let problem = SchemaProblem {
            at,
            message: not_taken.message.to_string(),
        };
        // A field the flow's kind does not take has no effect: dropping it changes nothing
        // else, as for an unknown key.
        return match table_at(table, &parent).and_then(|t| t.remove(not_taken.field)) {
            Some(_) => (problem, Repair::Meant),
            None => (problem, Repair::Stop),
        };
    }
    if let Some(unknown) = pathpool_core::text::UnknownName::parse(message) {
        let text = unknown.message();
        if unknown.is_field {
            // The path ends at the unknown key (serde_path_to_error records it).
            let at = path.clone();
            let mut parent = path;
            if parent.last() == Some(&key(unknown.name)) {
                parent.pop();
            }
            let problem = SchemaProblem { at, message: text };
            let Some(t) = table_at(table, &parent) else {
                return (problem, Repair::Stop);
            };
            let Some(value) = t.remove(unknown.name) else {
                return (problem, Repair::Stop);
            };
            // An unknown key has no effect: dropping it changes nothing else; renaming it to
            // what it meant checks the value under its name.
            if let Some(m) = unknown.meant.filter(|m| !t.contains_key(*m)) {
                t.insert(m.to_string(), value);
            }
            return (problem, Repair::Meant);
        }
        let repaired = unknown
            .meant
            .is_some_and(|m| set(table, &path, toml::Value::String(m.into())));
        let problem = SchemaProblem {
            at: path.clone(),
            message: text,
        };
        return if repaired {
            (problem, Repair::Meant)
        } else {
            removal(table, problem)
        };
    }
    let problem = SchemaProblem {
        at: path.clone(),
        message: message.to_string(),
    };
    if message.starts_with("missing field") || path.is_empty() {
        return (problem, Repair::Stop);
    }
    if let Some(v) = suggested_value(message) {
        if set(table, &path, toml::Value::String(v.to_string())) {
            return (problem, Repair::Meant);
        }
    }
    removal(table, problem)
}

fn removal(table: &mut toml::Table, problem: SchemaProblem) -> (SchemaProblem, Repair) {
    match remove(table, &problem.at) {
        Some(removed) => (problem, Repair::Removed(removed)),
        None => (problem, Repair::Stop),
    }
}

/// A `serde_path_to_error` path as field steps (enum steps carry no field name).
fn serde_path(p: &serde_path_to_error::Path) -> Vec<PathSeg> {
    use serde_path_to_error::Segment;
    p.iter()
        .filter_map(|s| match s {
            Segment::Seq { index } => Some(PathSeg::Index(*index)),
            Segment::Map { key } => Some(PathSeg::Key(key.clone())),
            Segment::Enum { .. } | Segment::Unknown => None,
        })
        .collect()
}

/// Checks `table` for every schema problem it has (up to [`MAX_ERRORS`]); `Ok` if it has none.
pub(crate) fn deserialize_all(table: toml::Table) -> Result<Scenario, Checked> {
    let mut copy = table;
    let mut problems: Vec<SchemaProblem> = Vec::new();
    let mut removed: Vec<Vec<PathSeg>> = Vec::new();
    loop {
        let result: Result<Scenario, _> =
            serde_path_to_error::deserialize(toml::Value::Table(copy.clone()));
        let e = match result {
            Ok(sc) if problems.is_empty() => return Ok(sc),
            Ok(sc) => {
                let repaired = removed.is_empty().then(|| Box::new(sc));
                return Err(Checked { problems, repaired });
            }
            Err(e) => e,
        };
        let path = serde_path(e.path());
        let message = e.inner().message().trim().to_string();
        // A required field that a removal took away: its problem is already recorded.
        if let Some(field) = quoted_after(&message, "missing field `") {
            let mut at = path.clone();
            at.push(PathSeg::Key(field.to_string()));
            if removed
                .iter()
                .any(|r| at.starts_with(r) || r.starts_with(&at))
            {
                break;
            }
        }
        let (problem, fix) = repair(&mut copy, path, &message);
        problems.push(problem);
        match fix {
            Repair::Meant => {}
            Repair::Removed(r) => removed.push(r),
            Repair::Stop => break,
        }
        if problems.len() >= MAX_ERRORS {
            break;
        }
    }
    Err(Checked {
        problems,
        repaired: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Checked {
        let table: toml::Table = toml::from_str(text).unwrap();
        deserialize_all(table).expect_err("problems")
    }

    const OK: &str = r#"
        duration = "10s"
        [nodes]
        hosts = ["a", "b"]
        [[links]]
        between = ["a", "b"]
        rate = "10Mbps"
        delay = "5ms"
        [[flows]]
        from = "a"
        to = "b"
    "#;

    #[test]
    fn three_mistakes_give_three_problems_with_suggestions() {
        let text = OK
            .replace("from = \"a\"", "form = \"a\"")
            .replace("10Mbps", "10mbps")
            .replace("[[flows]]", "[[flows]]\ncc = \"lai\"");
        let c = check(&text);
        let msgs: Vec<String> = c
            .problems
            .iter()
            .map(|p| format!("{}: {}", crate::error::format_path(&p.at), p.message))
            .collect();
        assert_eq!(msgs.len(), 3, "{msgs:#?}");
        assert!(
            msgs.iter()
                .any(|m| m.starts_with("flows[0].form: unknown field (did you mean `from`?)")),
            "{msgs:#?}"
        );
        assert!(
            msgs.iter()
                .any(|m| m.contains("links[0].rate") && m.contains("did you mean \"10Mbps\"?")),
            "{msgs:#?}"
        );
        assert!(
            msgs.iter()
                .any(|m| m.contains("flows[0].cc") && m.contains("did you mean \"lia\"?")),
            "{msgs:#?}"
        );
        let sc = c.repaired.expect("renames and suggestions only");
        assert_eq!(sc.flows[0].common().from, "a");
    }

    #[test]
    fn a_removed_required_value_stops_without_a_second_problem_for_it() {
        let text = OK.replace("rate = \"10Mbps\"", "rate = \"fast\"");
        let c = check(&text);
        assert_eq!(c.problems.len(), 1, "{:?}", c.problems);
        assert!(c.repaired.is_none());
    }

    #[test]
    fn unknown_keys_are_dropped_and_checking_goes_on() {
        let text = OK
            .replace(
                "duration = \"10s\"",
                "duration = \"10s\"\ncolour = \"blue\"",
            )
            .replace("delay = \"5ms\"", "delay = \"5ms\"\nweigth = 2.0");
        let c = check(&text);
        assert_eq!(c.problems.len(), 2, "{:?}", c.problems);
        assert!(c.problems[1].message.contains("did you mean `weight`?"));
        assert!(c.repaired.is_some());
    }
}
