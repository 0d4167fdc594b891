//! Autovacuum's job, stood in for on a server that has it off (as on this machine): the soak
//! must measure the design's cost, and a queue table on a server that never vacuums grows
//! whatever the design.

use std::time::Duration;

use sqlx::PgPool;
use tokio::task::JoinHandle;

/// Every table of the database whose dead rows passed the threshold its own settings give
/// (`autovacuum_vacuum_threshold + autovacuum_vacuum_scale_factor × rows`, per table or the
/// server's), as autovacuum computes it.
const DUE_SQL: &str = "
select format('%I.%I', s.schemaname, s.relname)
  from pg_stat_user_tables s
  join pg_class c on c.oid = s.relid
 where s.n_dead_tup > coalesce(
         (select option_value::float8 from pg_options_to_table(c.reloptions)
           where option_name = 'autovacuum_vacuum_threshold'),
         current_setting('autovacuum_vacuum_threshold')::float8)
       + coalesce(
         (select option_value::float8 from pg_options_to_table(c.reloptions)
           where option_name = 'autovacuum_vacuum_scale_factor'),
         current_setting('autovacuum_vacuum_scale_factor')::float8)
       * greatest(c.reltuples, 0)";

/// How often the stand-in looks (autovacuum's own `autovacuum_naptime` is one minute per
/// database; a second keeps the stand-in on the conservative side of it).
const NAP: Duration = Duration::from_secs(1);

/// A background task standing in for autovacuum on one database (see the module doc).
#[derive(Debug)]
pub struct StandIn {
    task: Option<JoinHandle<()>>,
}

impl StandIn {
    /// Starts standing in when the server's autovacuum is off; does nothing otherwise.
    pub async fn start(url: &str) -> anyhow::Result<Self> {
        let pool = PgPool::connect(url).await?;
        let on: String = sqlx::query_scalar("show autovacuum")
            .fetch_one(&pool)
            .await?;
        if on == "on" {
            pool.close().await;
            return Ok(Self { task: None });
        }
        let task = tokio::spawn(async move {
            loop {
                tokio::time::sleep(NAP).await;
                let due: Vec<String> = match sqlx::query_scalar(DUE_SQL).fetch_all(&pool).await {
                    Ok(due) => due,
                    Err(_) => continue,
                };
                for table in due {
                    // A failed vacuum (the database going away at the end) is retried or moot.
                    let _ = sqlx::query(sqlx::AssertSqlSafe(format!("vacuum (analyze) {table}")))
                        .execute(&pool)
                        .await;
                }
            }
        });
        Ok(Self { task: Some(task) })
    }

    /// Stops standing in; who vacuumed, for the table.
    pub async fn stop(self) -> &'static str {
        match self.task {
            Some(task) => {
                task.abort();
                let _ = task.await;
                "the server's is off; the bench vacuumed at each table's thresholds"
            }
            None => "the server's autovacuum",
        }
    }
}
