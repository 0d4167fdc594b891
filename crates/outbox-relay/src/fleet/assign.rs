//! Which databases an instance holds: pure functions, the same on every instance.
//!
//! Each instance plans its own tick from the registry's overview: its [`quota`] is
//! ⌈databases / live instances⌉; above it, it gives back the extras; below it, it claims free
//! databases in its own rendezvous order ([`choose`]). Instances planning at once prefer
//! different databases (the order is per instance), and a claim is one atomic update, so two
//! never hold one database. After its tick an instance holds at most its quota: the bound
//! ⌈databases / instances⌉ + 1 holds for every instance once each has ticked after a change
//! (an instance that joined lowers everyone's quota at their next tick, within a third of a
//! lease).

/// The most databases one instance holds: ⌈`databases` / `live_instances`⌉ (0 without
/// databases; an instance that counts no live instance counts itself).
pub fn quota(databases: usize, live_instances: usize) -> usize {
    databases.div_ceil(live_instances.max(1))
}

/// What an instance does this tick.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Free databases to claim, in order.
    pub claim: Vec<String>,
    /// Held databases to give back (after their relay stopped gracefully).
    pub release: Vec<String>,
}

/// The plan of instance `me` holding `held`, with `free` databases claimable and a `quota`:
/// above the quota, release the held ones it ranks lowest; below it, claim the free ones it
/// ranks highest. The rank is a rendezvous hash of (database, instance): stable, and
/// different per instance, so instances spread over the databases rather than race for the
/// same ones.
pub fn choose(me: &str, held: &[String], free: &[String], quota: usize) -> Plan {
    let mut plan = Plan::default();
    if held.len() > quota {
        let mut ranked: Vec<&String> = held.iter().collect();
        ranked.sort_by_key(|name| (score(name, me), (*name).clone()));
        plan.release = ranked
            .into_iter()
            .take(held.len() - quota)
            .cloned()
            .collect();
    } else {
        let mut ranked: Vec<&String> = free.iter().filter(|f| !held.contains(f)).collect();
        ranked.sort_by_key(|name| (std::cmp::Reverse(score(name, me)), (*name).clone()));
        plan.claim = ranked
            .into_iter()
            .take(quota - held.len())
            .cloned()
            .collect();
    }
    plan
}

/// The rendezvous score of `database` for `instance`: FNV-1a of both, mixed by MurmurHash3's
/// finalizer (FNV alone leaves the high bits to the first bytes: every instance would rank the
/// databases alike). Stable across builds and platforms, unlike the standard library's hasher.
fn score(database: &str, instance: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in database.bytes().chain([0xff]).chain(instance.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;

    #[test]
    fn quota_is_the_ceiling_of_databases_over_instances() {
        for (databases, instances, want) in [
            (0, 0, 0),
            (0, 3, 0),
            (1, 0, 1),
            (1, 1, 1),
            (1, 3, 1),
            (3, 3, 1),
            (4, 3, 2),
            (6, 3, 2),
            (7, 3, 3),
            (20, 3, 7),
            (200, 3, 67),
        ] {
            assert_eq!(
                quota(databases, instances),
                want,
                "{databases} / {instances}"
            );
        }
    }

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("db{i}")).collect()
    }

    #[test]
    fn below_quota_claims_free_ones_up_to_it_and_releases_nothing() {
        let free = names(5);
        let plan = choose("a", &[], &free, 2);
        assert_eq!(plan.claim.len(), 2);
        assert!(plan.release.is_empty());
        assert!(plan.claim.iter().all(|c| free.contains(c)));
        let plan = choose("a", &names(2), &free, 2);
        assert_eq!(plan, Plan::default(), "at quota: nothing to do");
        // Never claims what it holds.
        let plan = choose("a", &names(1), &names(1), 3);
        assert!(plan.claim.is_empty());
    }

    #[test]
    fn above_quota_releases_the_extras_and_claims_nothing() {
        let held = names(7);
        let plan = choose("a", &held, &names(9), 3);
        assert_eq!(plan.release.len(), 4);
        assert!(plan.claim.is_empty());
        assert!(plan.release.iter().all(|r| held.contains(r)));
    }

    #[test]
    fn the_order_is_stable_and_differs_between_instances() {
        let free = names(50);
        assert_eq!(choose("a", &[], &free, 5), choose("a", &[], &free, 5));
        let firsts: BTreeSet<String> = ["a", "b", "c", "d", "e"]
            .iter()
            .map(|i| choose(i, &[], &free, 1).claim[0].clone())
            .collect();
        assert!(
            firsts.len() >= 3,
            "instances prefer different databases: {firsts:?}"
        );
    }

    /// Instances ticking in turn (each one's claims taken before the next plans, as the
    /// registry's atomic claim orders them), joining one by one: after its tick an instance
    /// holds at most its quota, once all ticked nobody holds more than quota + 1 (in fact the
    /// quota), and every database is held exactly once.
    #[test]
    fn instances_ticking_in_turn_spread_every_database_and_never_exceed_quota_plus_one() {
        for (databases, instances) in [(1, 1), (5, 2), (20, 3), (7, 4), (200, 3), (3, 5)] {
            let all = names(databases);
            let mut held: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for joined in 1..=instances {
                held.insert(format!("i{joined}"), Vec::new());
                let q = quota(databases, joined);
                for _round in 0..4 {
                    let ids: Vec<String> = held.keys().cloned().collect();
                    for me in ids {
                        let taken: BTreeSet<String> = held.values().flatten().cloned().collect();
                        let free: Vec<String> = all
                            .iter()
                            .filter(|d| !taken.contains(*d))
                            .cloned()
                            .collect();
                        let plan = choose(&me, &held[&me], &free, q);
                        let mine = held.get_mut(&me).expect("instance");
                        mine.retain(|d| !plan.release.contains(d));
                        mine.extend(plan.claim);
                        assert!(
                            mine.len() <= q,
                            "{me} holds {} > {q} after its tick",
                            mine.len()
                        );
                    }
                    for (i, h) in &held {
                        assert!(h.len() <= q + 1, "{i} holds {} > {q} + 1", h.len());
                    }
                }
                let mut every: Vec<String> = held.values().flatten().cloned().collect();
                every.sort();
                let mut want = all.clone();
                want.sort();
                assert_eq!(
                    every, want,
                    "{databases} over {joined}: each held exactly once"
                );
                assert!(
                    held.values().all(|h| h.len() <= q),
                    "{databases} over {joined}: settled at quota {q}: {held:?}"
                );
            }
        }
    }
}
