//! `outboxctl replay`: an order's published events sent again to one queue.

use outbox_proto::relay::admin::v1::ReplayRequest;
use serde_json::json;

use super::listing::scope_prefix;
use crate::{Output, Result, Services, cli};

/// `outboxctl replay ...`.
pub(super) async fn replay(s: &Services, args: &cli::Replay, queue: &str) -> Result<Output> {
    let (shard, db) = crate::fleet::shard(s.fleet.as_ref(), &args.shard).await?;
    let order_id = args.order;
    let request = ReplayRequest {
        order_id,
        shard,
        // 0: no bound (the first or last kept).
        from_seq: args.from_seq.unwrap_or_default(),
        to_seq: args.to_seq.unwrap_or_default(),
        queue: queue.to_owned(),
        reason: args.reason.reason.clone(),
    };
    let r = s.admin().replay(request).await?;
    let seqs: Vec<String> = r.seqs.iter().map(i64::to_string).collect();
    Ok(Output {
        exit: 0,
        human: format!(
            "{}replayed {} event(s) of order {order_id} to queue {}: seq {}\n\
             Each carries `x-outbox-replay: true`; a consumer that dedupes by seq skips those it \
             handled already.\n",
            scope_prefix(shard, db.as_deref()),
            r.seqs.len(),
            r.queue,
            seqs.join(",")
        ),
        json: json!({
            "shard": shard,
            "db": db,
            "order_id": order_id,
            "queue": r.queue,
            "seqs": r.seqs,
        }),
    })
}
