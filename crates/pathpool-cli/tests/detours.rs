//! `pathpool detours` (issue 21, the detour census of Table 1): the census of a map, and a
//! malformed map line named with its file and line, exit status 2 and nothing printed.

use std::fs;
use std::process::{Command, Output};

fn pathpool(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pathpool"))
        .args(args)
        .output()
        .expect("runs")
}

/// VSNL's map, as the project ships it: Table 1's row 25.00%, 100/0/0/0/0, 1.
const VSNL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../data/rocketfuel/4755.r0.cch.abr"
);

#[test]
fn the_census_of_a_map_and_a_malformed_line_named_with_file_and_line() {
    let out = pathpool(&["detours", VSNL]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let row = text.lines().nth(1).unwrap_or_default();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cells,
        [
            "4755.r0.cch.abr",
            "11",
            "12",
            "25.00%",
            "100.00",
            "0.00",
            "0.00",
            "0.00",
            "0.00",
            "1"
        ],
        "{text}"
    );
    let json = pathpool(&["detours", "--json", VSNL]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["with_detour_pct"], 25.0);
    assert_eq!(v["max_link_detours"], 1);

    let dir = std::env::temp_dir().join(format!("pathpool-detours-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.cch");
    fs::write(&bad, "1 bb 2\n2 bb 1 3\n3 core 2\n").unwrap();
    let bad_arg = bad.display().to_string();
    // The good map first: nothing is printed for it either.
    let out = pathpool(&["detours", VSNL, &bad_arg]);
    let _ = fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        format!("error: {bad_arg}:3: router 3: role \"core\"; expected bb or nbb")
    );
}
