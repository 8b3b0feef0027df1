//! The naive `group_id` assignment the thesis measures its hash-table method against (thesis
//! §5.3, paper §4.1.3): compare every pair of paths link by link, O(h²·k²) for k paths of h
//! hops, then take the transitive closure of "shares a link". Test and benchmark code only;
//! the library has the O(k·h) method (`shared_link_groups`).

/// One group id per path, numbered as the library does: dense, in the order of each group's
/// first path. A pair's comparison stops at its first common link.
pub(crate) fn naive_shared_link_groups<L: PartialEq>(paths: &[Vec<L>]) -> Vec<u32> {
    let k = paths.len();
    let mut overlap = vec![vec![false; k]; k];
    for i in 0..k {
        for j in i + 1..k {
            let shared = paths[i].iter().any(|a| paths[j].iter().any(|b| a == b));
            overlap[i][j] = shared;
            overlap[j][i] = shared;
        }
    }
    closure(&overlap)
}

/// Dense group ids of the connected components of a symmetric relation, in the order of each
/// component's smallest member.
pub(crate) fn closure(related: &[Vec<bool>]) -> Vec<u32> {
    let k = related.len();
    let mut ids = vec![u32::MAX; k];
    let mut next = 0;
    for start in 0..k {
        if ids[start] != u32::MAX {
            continue;
        }
        let mut stack = vec![start];
        ids[start] = next;
        while let Some(p) = stack.pop() {
            for q in 0..k {
                if related[p][q] && ids[q] == u32::MAX {
                    ids[q] = next;
                    stack.push(q);
                }
            }
        }
        next += 1;
    }
    ids
}
