//! `outboxctl backlog`: the relay's unsent rows.

use outbox_proto::relay::admin::v1::ListBacklogRequest;
use serde_json::json;

use super::{
    listing::{ShardTable, event_cells, unavailable_json, unavailable_note},
    relay_admin, u,
};
use crate::{Failure, Output, Result, Services, table::age};

/// `outboxctl backlog`.
pub(super) async fn backlog(s: &Services, limit: u32) -> Result<Output> {
    let (addr, mut c) = relay_admin(s).await?;
    let r = c
        .list_backlog(s.request(ListBacklogRequest { limit }, false)?)
        .await
        .map_err(|e| Failure::from_status("relay-svc", &addr, &e))?
        .into_inner();
    let sharded = r.rows.iter().any(|row| row.shard > 0) || !r.unavailable_shards.is_empty();
    let mut t = ShardTable::new(sharded, &["SEQ", "ORDER", "TYPE", "PREV", "AGE"]);
    for row in &r.rows {
        let mut cells = event_cells(row.seq, row.order_id, &row.r#type);
        cells.extend([row.prev_seq.map_or("-".into(), u), age(row.age_ms)]);
        t.row(row.shard, cells);
    }
    let mut human = format!(
        "outbox backlog: {} row(s), oldest {}; quarantined {} (holding back {} row(s))\n",
        r.count,
        age(r.oldest_age_ms),
        r.quarantined,
        r.held_back
    );
    if !r.rows.is_empty() {
        human.push_str(&t.render());
    }
    human.push_str(&unavailable_note(&r.unavailable_shards));
    Ok(Output {
        exit: 0,
        human,
        json: json!({
            "count": r.count,
            "oldest_age_ms": r.oldest_age_ms,
            "quarantined": r.quarantined,
            "held_back": r.held_back,
            "unavailable_shards": unavailable_json(&r.unavailable_shards),
            "rows": r.rows.iter().map(|row| json!({
                "shard": row.shard, "seq": row.seq, "order_id": row.order_id,
                "type": row.r#type, "prev_seq": row.prev_seq, "age_ms": row.age_ms,
            })).collect::<Vec<_>>(),
        }),
    })
}
