//! Random bytes drawn from the platform CSPRNG in batches and handed out once each.
//!
//! One `crypto.getRandomValues` call costs about as much for 256 bytes as for 16 (the
//! fixed cost is the call, not the bytes), and an idempotency key needs 16 per call.
//! The pool draws [`POOL_BYTES`] at a time, lazily (never at module load: Workers allow
//! no randomness there), and gives every byte out at most once, as Node's
//! `crypto.randomUUID` does with its own batch. The source is a parameter, so the
//! pool is tested natively.

/// Bytes drawn per refill: 16 keys' worth.
pub const POOL_BYTES: usize = 256;

/// Unused random bytes from the last draw.
pub struct EntropyPool {
    bytes: [u8; POOL_BYTES],
    /// How many bytes from the start of `bytes` are used up (or never drawn).
    used: usize,
}

impl Default for EntropyPool {
    fn default() -> Self {
        EntropyPool {
            bytes: [0; POOL_BYTES],
            used: POOL_BYTES,
        }
    }
}

impl EntropyPool {
    /// `N` fresh random bytes (`N` ≤ [`POOL_BYTES`]); refills the pool through `fill`
    /// when fewer than `N` are left. If `fill` fails, its error is returned and the pool
    /// stays empty: no byte is ever handed out twice or without having been drawn.
    pub fn take<const N: usize, E>(
        &mut self,
        fill: impl FnOnce(&mut [u8]) -> Result<(), E>,
    ) -> Result<[u8; N], E> {
        const { assert!(N <= POOL_BYTES) };
        if POOL_BYTES - self.used < N {
            self.used = POOL_BYTES;
            fill(&mut self.bytes)?;
            self.used = 0;
        }
        let mut out = [0u8; N];
        out.copy_from_slice(&self.bytes[self.used..self.used + N]);
        // Handed out: wiped, so that the pool never holds bytes already in a key.
        self.bytes[self.used..self.used + N].fill(0);
        self.used += N;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A source that writes a running counter (so every drawn byte is distinguishable
    /// by position) and counts its calls.
    struct Counter {
        next: u32,
        calls: u32,
    }

    impl Counter {
        fn fill(&mut self, buf: &mut [u8]) -> Result<(), ()> {
            self.calls += 1;
            for b in buf {
                *b = (self.next % 251) as u8;
                self.next += 1;
            }
            Ok(())
        }
    }

    #[test]
    fn draws_once_per_sixteen_keys_and_lazily() {
        let mut pool = EntropyPool::default();
        let mut src = Counter { next: 0, calls: 0 };
        assert_eq!(src.calls, 0, "nothing is drawn before the first take");
        let first: [u8; 16] = pool.take(|b| src.fill(b)).expect("fill");
        assert_eq!(src.calls, 1);
        assert_eq!(first[..4], [0, 1, 2, 3]);
        for _ in 1..POOL_BYTES / 16 {
            let _: [u8; 16] = pool.take(|b| src.fill(b)).expect("fill");
        }
        assert_eq!(src.calls, 1, "16 keys from one draw");
        let _: [u8; 16] = pool.take(|b| src.fill(b)).expect("fill");
        assert_eq!(src.calls, 2, "the 17th key needs a new draw");
    }

    #[test]
    fn a_failed_draw_hands_nothing_out_and_the_next_one_starts_afresh() {
        let mut pool = EntropyPool::default();
        let mut src = Counter { next: 0, calls: 0 };
        for _ in 0..POOL_BYTES / 16 - 1 {
            let _: [u8; 16] = pool.take(|b| src.fill(b)).expect("fill");
        }
        let last: [u8; 16] = pool.take(|b| src.fill(b)).expect("fill");
        assert_eq!(pool.take::<16, _>(|_| Err("no CSPRNG")), Err("no CSPRNG"));
        // Still empty after the failure: the next take draws again, never reuses.
        let again: [u8; 16] = pool.take(|b| src.fill(b)).expect("fill");
        assert_eq!(src.calls, 2);
        assert_ne!(again, last);
        assert_eq!(again[0], (POOL_BYTES % 251) as u8);
    }

    #[test]
    fn a_partial_remainder_is_skipped_not_split() {
        let mut pool = EntropyPool::default();
        let mut src = Counter { next: 0, calls: 0 };
        let _: [u8; 250] = pool.take(|b| src.fill(b)).expect("fill");
        let next: [u8; 8] = pool.take(|b| src.fill(b)).expect("fill");
        assert_eq!(src.calls, 2, "6 bytes left are not enough for 8");
        assert_eq!(
            next[0],
            (POOL_BYTES % 251) as u8,
            "taken from the new draw's start"
        );
    }

    proptest! {
        /// Whatever the sizes asked for, no drawn byte position is handed out twice,
        /// and the bytes handed out are exactly the drawn ones, in order.
        #[test]
        fn every_drawn_byte_is_handed_out_at_most_once(sizes in prop::collection::vec(0usize..3, 1..200)) {
            let mut pool = EntropyPool::default();
            // Positions as u32 counters, drawn as 4 little-endian bytes each.
            let mut next = 0u32;
            let mut fill = |buf: &mut [u8]| -> Result<(), ()> {
                for chunk in buf.chunks_mut(4) {
                    chunk.copy_from_slice(&next.to_le_bytes());
                    next += 1;
                }
                Ok(())
            };
            let mut seen = Vec::new();
            for s in sizes {
                let words: Vec<u32> = match s {
                    0 => pool.take::<4, _>(&mut fill).expect("fill").chunks(4).map(|c| u32::from_le_bytes(c.try_into().expect("4"))).collect(),
                    1 => pool.take::<8, _>(&mut fill).expect("fill").chunks(4).map(|c| u32::from_le_bytes(c.try_into().expect("4"))).collect(),
                    _ => pool.take::<16, _>(&mut fill).expect("fill").chunks(4).map(|c| u32::from_le_bytes(c.try_into().expect("4"))).collect(),
                };
                seen.extend(words);
            }
            let mut sorted = seen.clone();
            sorted.sort_unstable();
            sorted.dedup();
            prop_assert_eq!(sorted.len(), seen.len(), "a byte position was handed out twice");
            prop_assert!(seen.windows(2).all(|w| w[0] < w[1]), "handed out in draw order");
        }
    }
}
