//! How listings show shards: a SHARD column only when a row is beyond shard 0, and what a
//! partial answer left out.

use outbox_proto::relay::admin::v1::UnavailableShard;
use serde_json::{Value, json};

use super::step;
use crate::table::Table;

/// A listing's table. It names each row's shard only when the listing spans shards (relay-svc
/// with RELAY_SHARDS: some row is on a shard other than 0, or a shard left out): the unsharded
/// tables stay as they were.
#[derive(Debug)]
pub(super) struct ShardTable {
    sharded: bool,
    table: Table,
}

impl ShardTable {
    pub(super) fn new(sharded: bool, header: &[&str]) -> Self {
        let shard = sharded.then_some("SHARD");
        let header: Vec<&str> = shard.into_iter().chain(header.iter().copied()).collect();
        Self {
            sharded,
            table: Table::new(&header),
        }
    }

    /// A row of `shard`.
    pub(super) fn row(&mut self, shard: u32, cells: Vec<String>) {
        let shard = self.sharded.then(|| shard.to_string());
        self.table.row(shard.into_iter().chain(cells).collect());
    }

    pub(super) fn render(&self) -> String {
        self.table.render()
    }
}

/// The cells of the columns every listing of outbox rows starts with: SEQ, ORDER and TYPE.
pub(super) fn event_cells(seq: u64, order_id: i64, r#type: &str) -> Vec<String> {
    vec![seq.to_string(), order_id.to_string(), r#type.to_owned()]
}

/// What a listing left out: one line per shard whose database could not be read (nothing when
/// every shard answered), so that a partial answer never reads as the whole.
pub(super) fn unavailable_note(shards: &[UnavailableShard]) -> String {
    shards
        .iter()
        .map(|u| {
            format!(
                "shard {} left out (its database cannot be read: {}): the figures above are \
                 the other shards'\n",
                u.shard, u.error
            )
        })
        .collect()
}

pub(super) fn unavailable_json(shards: &[UnavailableShard]) -> Value {
    shards
        .iter()
        .map(|u| json!({"shard": u.shard, "error": u.error}))
        .collect()
}

/// `shard 1: ` before an answer about shard 1's rows; nothing for shard 0.
pub(super) fn shard_prefix(shard: u32) -> String {
    step(shard > 0, &format!("shard {shard}: "))
}

/// What an action's output starts with: the database named by `--db`, else [`shard_prefix`].
pub(super) fn scope_prefix(shard: u32, db: Option<&str>) -> String {
    match db {
        Some(name) => format!("{name} (shard {shard}): "),
        None => shard_prefix(shard),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(shards: &[u32]) -> String {
        let sharded = shards.iter().any(|s| *s > 0);
        let mut t = ShardTable::new(sharded, &["SEQ", "ORDER"]);
        for (i, shard) in shards.iter().enumerate() {
            t.row(*shard, vec![i.to_string(), "42".into()]);
        }
        t.render()
    }

    #[test]
    fn listings_name_the_shard_only_when_a_row_is_beyond_shard_0() {
        assert_eq!(listing(&[0, 0]), "SEQ  ORDER\n0    42\n1    42\n");
        assert_eq!(
            listing(&[0, 1]),
            "SHARD  SEQ  ORDER\n0      0    42\n1      1    42\n"
        );
        assert_eq!(shard_prefix(0), "");
        assert_eq!(shard_prefix(2), "shard 2: ");
    }

    #[test]
    fn a_partial_listing_says_which_shard_it_left_out() {
        assert_eq!(unavailable_note(&[]), "");
        assert_eq!(unavailable_json(&[]), json!([]));
        let down = [UnavailableShard {
            shard: 1,
            error: "database unavailable, retry later".into(),
        }];
        assert_eq!(
            unavailable_note(&down),
            "shard 1 left out (its database cannot be read: database unavailable, retry later): \
             the figures above are the other shards'\n"
        );
        assert_eq!(
            unavailable_json(&down),
            json!([{"shard": 1, "error": "database unavailable, retry later"}])
        );
    }
}
