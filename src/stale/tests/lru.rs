use super::*;

#[test]
fn the_store_drops_the_least_recently_used_by_entries_and_bytes() {
    let mut s = Lru::new(2, 100);
    assert_eq!(s.put("a", 1, 10), Put::Kept(vec![]));
    assert_eq!(s.put("b", 2, 10), Put::Kept(vec![]));
    assert_eq!(s.get("a"), Some(&1)); // b is now the oldest
    assert_eq!(s.put("c", 3, 10), Put::Kept(vec!["b".to_owned()]));
    assert_eq!((s.len(), s.bytes()), (2, 20));
    assert_eq!(s.put("d", 4, 85), Put::Kept(vec!["a".to_owned()]));
    assert_eq!(
        s.put("e", 5, 60),
        Put::Kept(vec!["c".to_owned(), "d".to_owned()])
    );
    assert_eq!(s.put("e", 6, 101), Put::TooLarge);
    assert!(s.is_empty() && s.peek("e").is_none());
    assert!(s.put("f", 7, 100) == Put::Kept(vec![]) && s.delete("f") && !s.delete("f"));
    assert_eq!((s.len(), s.bytes()), (0, 0));
}

proptest! {
    #[test]
    fn the_store_keeps_its_bounds_and_matches_a_simple_model(
        ops in prop::collection::vec((0u8..3, 0u8..6, 0u64..40), 0..60),
    ) {
        let mut s = Lru::new(3, 50);
        // The model: keys in use order, oldest first, with their sizes.
        let mut model: Vec<(String, u64)> = Vec::new();
        for (op, k, bytes) in ops {
            let k = k.to_string();
            match op {
                0 => {
                    let got = s.put(&k, bytes, bytes);
                    model.retain(|(m, _)| *m != k);
                    if bytes > 50 {
                        prop_assert_eq!(got, Put::TooLarge);
                        continue;
                    }
                    model.push((k, bytes));
                    let mut dropped = Vec::new();
                    while model.len() > 3 || model.iter().map(|m| m.1).sum::<u64>() > 50 {
                        dropped.push(model.remove(0).0);
                    }
                    prop_assert_eq!(got, Put::Kept(dropped));
                }
                1 => {
                    let held = s.get(&k).copied();
                    let at = model.iter().position(|(m, _)| *m == k);
                    prop_assert_eq!(held, at.map(|i| model[i].1));
                    if let Some(i) = at {
                        let m = model.remove(i);
                        model.push(m);
                    }
                }
                _ => {
                    let had = model.iter().any(|(m, _)| *m == k);
                    model.retain(|(m, _)| *m != k);
                    prop_assert_eq!(s.delete(&k), had);
                }
            }
            prop_assert!(s.len() <= 3 && s.bytes() <= 50);
            prop_assert_eq!(s.bytes(), model.iter().map(|m| m.1).sum::<u64>());
        }
    }
}
