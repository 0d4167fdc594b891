//! Sharded writes: which of the `SHARDS` databases an order lives in.
//!
//! An order's shard is `(fnv1a64(id as little-endian bytes) × shard count) >> 64`: FNV-1a 64 as
//! specified by its authors (offset basis `0xcbf29ce484222325`, prime `0x100000001b3`), reduced
//! to `0..count` by its HIGH bits (a multiply-shift; FNV's low bits mix poorly, so `% count` of a
//! power of two would depend on few input bits). A fixed function of the id's eight bytes, the same
//! on every platform, compiler and release (unlike `std`'s `DefaultHasher`). Every order's rows, its outbox events and its chain live in its shard
//! only. Changing the number of shards moves orders between shards, so it needs a data migration;
//! the mapping is pinned by a test so that no code change moves an order by accident.

use outbox::NewEvent;

/// The message header that names an event's shard (its index in `SHARDS`, from 0). Set only when
/// orders-svc runs on more than one shard; absent means shard 0.
pub const SHARD_HEADER: &str = outbox::wire::HEADER_SHARD;

const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a 64 of the id's little-endian bytes.
pub fn fnv1a64(id: i64) -> u64 {
    id.to_le_bytes()
        .iter()
        .fold(FNV_OFFSET_BASIS, |hash, byte| {
            (hash ^ u64::from(*byte)).wrapping_mul(FNV_PRIME)
        })
}

/// The shard (index into `SHARDS`) order `id` lives in, for `count` shards (at least one).
pub fn of(id: i64, count: usize) -> usize {
    assert!(count > 0, "at least one shard");
    ((u128::from(fnv1a64(id)) * count as u128) >> 64) as usize
}

/// One shard of `count`: where a writer appends, and what its events say about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Its index in `SHARDS`, from 0.
    pub index: usize,
    /// How many shards there are.
    pub count: usize,
}

impl Shard {
    /// The one shard of an unsharded service (`DATABASE_URL`).
    pub const ONLY: Shard = Shard { index: 0, count: 1 };

    /// Marks `event` with this shard ([`SHARD_HEADER`]) when there is more than one; a single
    /// shard's messages stay exactly as they were before sharding.
    pub fn tag(self, event: NewEvent) -> NewEvent {
        if self.count > 1 {
            event.header(SHARD_HEADER, self.index.to_string())
        } else {
            event
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_matches_the_reference_vectors() {
        // Eight zero bytes (id 0), computed independently from the specification.
        assert_eq!(fnv1a64(0), 0xa8c7_f832_281a_39c5);
    }

    /// Pins the mapping: a change of the hash, of the byte order or of the reduction moves
    /// existing orders to another database, and fails here first.
    #[test]
    fn the_mapping_of_ids_to_shards_is_stable() {
        let ids = [1_i64, 2, 3, 4, 5, 42, 1000, 123_456_789, i64::MAX];
        let two: Vec<usize> = ids.iter().map(|&id| of(id, 2)).collect();
        let four: Vec<usize> = ids.iter().map(|&id| of(id, 4)).collect();
        let three: Vec<usize> = ids.iter().map(|&id| of(id, 3)).collect();
        assert_eq!(two, PINNED_2);
        assert_eq!(three, PINNED_3);
        assert_eq!(four, PINNED_4);
        assert!(ids.iter().all(|&id| of(id, 1) == 0));
    }

    #[test]
    fn sequential_ids_spread_evenly() {
        for count in [2, 3, 4] {
            let mut per_shard = vec![0_usize; count];
            for id in 1..=10_000 {
                per_shard[of(id, count)] += 1;
            }
            let fair = 10_000 / count;
            assert!(
                per_shard.iter().all(|&n| n.abs_diff(fair) < fair / 20),
                "{count} shards: {per_shard:?}"
            );
        }
    }

    #[test]
    fn only_several_shards_tag_their_events() {
        let event = || NewEvent::new("order", 1, "t", "k", vec![]);
        assert_eq!(Shard::ONLY.tag(event()), event());
        assert_eq!(
            Shard { index: 1, count: 2 }.tag(event()),
            event().header(SHARD_HEADER, "1")
        );
    }

    // Computed independently (a few lines of Python after the specification), not by this code.
    const PINNED_2: [usize; 9] = [1, 1, 1, 0, 0, 1, 1, 1, 1];
    const PINNED_3: [usize; 9] = [1, 2, 2, 0, 0, 2, 2, 2, 1];
    const PINNED_4: [usize; 9] = [2, 3, 3, 0, 0, 3, 2, 3, 2];
}
