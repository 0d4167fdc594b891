//! `outboxctl mails`: list and retry the mails that failed.

use outbox_proto::mail::admin::v1::{ListFailedMailsRequest, MailFilter, RetryMailsRequest};
use serde_json::json;
use tonic::Status;

use super::{listing::ShardTable, mail_admin, seq_list, u};
use crate::{
    Failure, Output, Result, Services,
    cli::{Act, ListArgs, Mails},
};

/// `outboxctl mails ...`.
pub(super) async fn mails(s: &Services, m: &Mails) -> Result<Output> {
    let (addr, mut c) = mail_admin(s).await?;
    let fail = |e: Status| Failure::from_status("mail-svc", &addr, &e);
    match m {
        Mails::Failed(ListArgs { order, limit }) => {
            let request = ListFailedMailsRequest {
                limit: *limit,
                order_id: order.unwrap_or_default(),
            };
            let r = c
                .list_failed_mails(s.request(request, false)?)
                .await
                .map_err(fail)?
                .into_inner();
            let sharded = r.mails.iter().any(|f| f.shard > 0);
            let mut t = ShardTable::new(
                sharded,
                &["SEQ", "ORDER", "TYPE", "RECIPIENT", "ATTEMPTS", "ERROR"],
            );
            for f in &r.mails {
                t.row(
                    f.shard,
                    vec![
                        u(f.seq),
                        f.order_id.to_string(),
                        f.r#type.clone(),
                        f.recipient.clone(),
                        f.attempts.to_string(),
                        f.last_error.clone(),
                    ],
                );
            }
            let human = if r.mails.is_empty() {
                "no failed mail\n".to_owned()
            } else {
                format!("{} failed mail(s)\n{}", r.count, t.render())
            };
            Ok(Output {
                exit: 0,
                human,
                json: json!({
                    "count": r.count,
                    "mails": r.mails.iter().map(|f| json!({
                        "shard": f.shard, "seq": f.seq, "order_id": f.order_id, "type": f.r#type,
                        "recipient": f.recipient, "last_error": f.last_error,
                        "attempts": f.attempts,
                        "failed_at_unix": f.failed_at.as_ref().map(|t| t.seconds),
                    })).collect::<Vec<_>>(),
                }),
            })
        }
        Mails::Retry(Act {
            select,
            shard,
            reason,
        }) => {
            let (shard, _) = crate::fleet::shard(s.fleet.as_ref(), shard).await?;
            let request = RetryMailsRequest {
                filter: Some(MailFilter {
                    seqs: select.seq.clone(),
                    order_id: select.order.unwrap_or_default(),
                    all_failed: select.all_failed,
                    shard,
                }),
                reason: reason.reason.clone(),
            };
            let r = c
                .retry_mails(s.request(request, true)?)
                .await
                .map_err(fail)?
                .into_inner();
            Ok(Output {
                exit: 0,
                human: format!(
                    "retried: {}\nnot failed (queued or sent already, nothing done): {}\n",
                    seq_list(&r.retried),
                    seq_list(&r.not_failed)
                ),
                json: json!({ "retried": r.retried, "not_failed": r.not_failed }),
            })
        }
    }
}
