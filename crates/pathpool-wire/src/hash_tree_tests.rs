use super::*;
use proptest::prelude::*;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn content(len: usize) -> Vec<u8> {
    (0..len).map(|i| ((i * 7) % 251) as u8).collect()
}

fn tree_of(content: &[u8], chunk_bytes: u32) -> HashTree {
    let leaves = content
        .chunks(chunk_bytes as usize)
        .enumerate()
        .map(|(i, c)| leaf_hash(i as u64, c))
        .collect();
    HashTree::from_leaves(leaves, chunk_bytes).unwrap()
}

/// A second, deliberately plain construction: recursion over the levels from the leaves,
/// collecting each level's pages and putting the levels in transfer order at the end.
fn plain_root_and_pages(content: &[u8], chunk_bytes: usize) -> (Hash, Vec<Vec<u8>>) {
    let f = chunk_bytes / 32;
    let mut level: Vec<Hash> = content
        .chunks(chunk_bytes)
        .enumerate()
        .map(|(i, c)| leaf_hash(i as u64, c))
        .collect();
    let mut levels: Vec<Vec<Vec<u8>>> = Vec::new();
    for l in 0u8.. {
        let pages: Vec<Vec<u8>> = level.chunks(f).map(|g| g.concat()).collect();
        let hashes: Vec<Hash> = pages
            .iter()
            .enumerate()
            .map(|(j, p)| page_hash(l, j as u64, p))
            .collect();
        let last = level.len() <= f;
        levels.push(pages);
        if last {
            let order = levels.into_iter().rev().flatten().collect();
            return (hashes[0], order);
        }
        level = hashes;
    }
    unreachable!()
}

/// Vectors computed independently with the Python `blake3` package 1.0.11 (bindings of the
/// blake3 crate, but a separate tree construction: /tmp/a_tree.py of the issue-18 work,
/// reproduced in docs/wire.md): 300 bytes `(i * 7) % 251` in chunks of 64 bytes (F = 2):
/// five leaves, pages 3 + 2 + 1.
#[test]
fn the_documented_vectors() {
    let c = content(300);
    assert_eq!(
        hex(&leaf_hash(0, &c[..64])),
        "37f5d53472102e5d4c180d190bbbcbec448dc58e3b632299bc4314b4114b20f0"
    );
    let t = tree_of(&c, 64);
    assert_eq!(t.shape().pages(), 6);
    assert_eq!(t.shape().levels(), 3);
    assert_eq!(
        (0..6).map(|i| t.page(i).unwrap().len()).collect::<Vec<_>>(),
        vec![64, 64, 32, 64, 64, 32]
    );
    assert_eq!(
        hex(t.page(0).unwrap()),
        "f9b66f0da1c293ca68623b3428383d7403d9454f50d23b2f5a1787439ff76c5d\
         926c6426704ccc9b4caa7e6efdb080244467a36696aa23e3804e58bac53f6009"
    );
    assert_eq!(
        hex(&t.root()),
        "bfea22b098eb7c6bb34d0d0daa32c84177c942107a3d419e21c424ef01cfe910"
    );
    let one = tree_of(b"pathpool", 64);
    assert_eq!(one.shape().pages(), 1);
    assert_eq!(
        hex(&one.root()),
        "64322ebe181d3ce1dbc23ccb48dfde769b38459b332bc6fb66ebcfb8935bbf32"
    );
}

#[test]
fn shapes_place_pages_top_down() {
    let s = TreeShape::new(5, 64).unwrap();
    // Root page 0 (level 2), level 1 pages 1-2, leaf pages 3-5, data chunks 6-10.
    assert_eq!(s.page_position(0), Some((2, 0)));
    assert_eq!(s.page_position(2), Some((1, 1)));
    assert_eq!(s.page_position(5), Some((0, 2)));
    assert_eq!(s.page_position(6), None);
    assert_eq!(s.parent(0), None);
    assert_eq!(s.parent(2), Some((0, 1)));
    assert_eq!(s.parent(5), Some((2, 0)));
    assert_eq!(s.parent(6), Some((3, 0)));
    assert_eq!(s.parent(10), Some((5, 0)));
    assert_eq!(s.parent(11), None);
    assert_eq!(TreeShape::new(0, 64), Err(TreeError::Empty));
    assert_eq!(
        TreeShape::new(3, 63),
        Err(TreeError::ChunkTooSmall { chunk_bytes: 63 })
    );
    assert_eq!(TreeShape::new(u32::MAX, 64), Err(TreeError::TooManyChunks));
}

#[test]
fn a_chunk_before_its_page_waits_and_an_index_beyond_is_invalid() {
    let c = content(300);
    let t = tree_of(&c, 64);
    let mut v = Verifier::new(t.shape().clone(), t.root());
    assert_eq!(v.check(6, &c[..64]), Check::ParentMissing { parent: 3 });
    assert_eq!(v.check(11, b"x"), Check::Invalid);
    for i in 0..6 {
        assert_eq!(v.check(i, t.page(i).unwrap()), Check::Valid, "page {i}");
    }
    assert_eq!(v.check(6, &c[..64]), Check::Valid);
    assert_eq!(v.leaf(4), t.leaf(4).copied());
    // A valid chunk at another index is invalid there (the index is hashed).
    assert_eq!(v.check(7, &c[..64]), Check::Invalid);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Over n = 1..=F²+1 chunks (F = 2 and 3), the tree is the plain construction's, and
    /// every page and chunk verifies in transfer order.
    #[test]
    fn every_size_up_to_two_full_levels(f in 2usize..=3, extra in 0usize..60) {
        let chunk_bytes = 32 * f;
        for n in 1..=f * f + 1 {
            let len = (n - 1) * chunk_bytes + 1 + extra % chunk_bytes;
            let c = content(len);
            let t = tree_of(&c, chunk_bytes as u32);
            let (root, pages) = plain_root_and_pages(&c, chunk_bytes);
            prop_assert_eq!(t.root(), root);
            prop_assert_eq!(t.shape().pages() as usize, pages.len());
            let mut v = Verifier::new(t.shape().clone(), t.root());
            for (i, p) in pages.iter().enumerate() {
                prop_assert_eq!(v.check(i as u32, p), Check::Valid);
            }
            for (i, chunk) in c.chunks(chunk_bytes).enumerate() {
                prop_assert_eq!(v.check(pages.len() as u32 + i as u32, chunk), Check::Valid);
            }
        }
    }

    /// Any single flipped bit of any page or chunk is caught.
    #[test]
    fn any_flipped_byte_is_detected(len in 1usize..3000, at in any::<prop::sample::Index>(), bit in 0u8..8) {
        let chunk_bytes = 96u32;
        let c = content(len);
        let t = tree_of(&c, chunk_bytes);
        let pages = t.shape().pages();
        let mut chunks: Vec<Vec<u8>> = (0..pages).map(|i| t.page(i).unwrap().to_vec()).collect();
        chunks.extend(c.chunks(chunk_bytes as usize).map(<[u8]>::to_vec));
        let total: usize = chunks.iter().map(Vec::len).sum();
        let mut flip = at.index(total);
        let mut target = 0;
        while flip >= chunks[target].len() {
            flip -= chunks[target].len();
            target += 1;
        }
        chunks[target][flip] ^= 1 << bit;
        let mut v = Verifier::new(t.shape().clone(), t.root());
        let mut invalid = Vec::new();
        for (i, ch) in chunks.iter().enumerate() {
            match v.check(i as u32, ch) {
                Check::Valid => {}
                Check::Invalid => invalid.push(i),
                // The children of the flipped page cannot be checked: never accepted.
                Check::ParentMissing { .. } => {}
            }
        }
        prop_assert_eq!(invalid, vec![target]);
    }
}
