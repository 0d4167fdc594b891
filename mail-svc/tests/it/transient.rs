//! A transient database error never dead-letters a valid event: the database turned read-only
//! (as during a switchover) while events arrive delays them, unacked, and every one is processed
//! and mailed once it is writable again. Also: real PostgreSQL errors land in the classes of
//! `outbox_inbox::failure`, the rule mail-svc's consumer applies.

use std::time::{Duration, Instant};

use lapin::{Connection, ConnectionProperties, options::BasicGetOptions};
use outbox_inbox::failure::{Failure, classify};
use outbox_proto::orders::v1::OrderStatus;
use sqlx::{AssertSqlSafe, Connection as _, PgConnection, PgPool};

use crate::common::{self, Names, Publisher, changed, config, created, eventually, start};

const EMAIL: &str = "goro@example.jp";

/// Transactions committed and rolled back in `db` so far (PostgreSQL's statistics).
async fn xacts(admin: &PgPool, db: &str) -> i64 {
    sqlx::query_scalar(
        "select (xact_commit + xact_rollback)::bigint from pg_stat_database where datname = $1",
    )
    .bind(db)
    .fetch_one(admin)
    .await
    .expect("pg_stat_database")
}

async fn terminate_sessions(admin: &PgPool, db: &str) {
    sqlx::query(
        "select pg_terminate_backend(pid) from pg_stat_activity
          where datname = $1 and pid <> pg_backend_pid()",
    )
    .bind(db)
    .execute(admin)
    .await
    .expect("terminate the service's sessions");
}

#[tokio::test]
async fn a_read_only_database_for_10s_dead_letters_nothing_and_loses_nothing() {
    // The retry counter read below is process-wide: only in a process of its own does it count
    // this test's retries alone.
    if outbox_testkit::run_in_own_process(concat!(
        module_path!(),
        "::a_read_only_database_for_10s_dead_letters_nothing_and_loses_nothing"
    )) {
        return;
    }
    let names = Names::new();
    let db = names
        .database_url
        .rsplit('/')
        .next()
        .expect("database name")
        .to_owned();
    let svc = start(config(&names)).await;
    let admin = PgPool::connect(&format!("{}/postgres", outbox_testkit::pg_server_url()))
        .await
        .expect("admin connection");
    let publisher = Publisher::connect(&names.exchange).await;
    publisher.proto(&created(1, 1, EMAIL)).await;
    eventually("first event", 60, || async {
        (svc.status().await.processed == 1).then_some(())
    })
    .await;

    // Read-only for every new session; the service's sessions are ended so that they reconnect
    // into it (a switchover as the service sees it).
    let quoted = format!("\"{db}\"");
    sqlx::query(AssertSqlSafe(format!(
        "alter database {quoted} set default_transaction_read_only = on"
    )))
    .execute(&admin)
    .await
    .expect("read-only");
    terminate_sessions(&admin, &db).await;
    let xacts_before = xacts(&admin, &db).await;
    let started = Instant::now();

    // Events keep arriving for 10 s: a new order and its change every second (20 events).
    let mut seq = 1;
    for order in 2..=11 {
        seq += 1;
        publisher.proto(&created(seq, order, EMAIL)).await;
        seq += 1;
        publisher
            .proto(&changed(seq, seq - 1, order, OrderStatus::Paid, EMAIL))
            .await;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let direct = PgPool::connect(&names.database_url)
        .await
        .expect("direct connection");
    let mails_during: i64 = sqlx::query_scalar("select count(*) from mails")
        .fetch_one(&direct)
        .await
        .expect("count");
    let attempts = xacts(&admin, &db).await - xacts_before;

    // Writable again. The service's sessions are NOT ended: the consumer must drop the read-only
    // connections it meets by itself.
    sqlx::query(AssertSqlSafe(format!(
        "alter database {quoted} reset default_transaction_read_only"
    )))
    .execute(&admin)
    .await
    .expect("read-write");
    let writable = Instant::now();
    assert_eq!(mails_during, 1, "nothing can be written while read-only");
    eventually(
        "every event processed after the database is writable",
        120,
        || async {
            let n: i64 = sqlx::query_scalar("select count(*) from mails")
                .fetch_one(&direct)
                .await
                .ok()?;
            (n == 21).then_some(())
        },
    )
    .await;
    println!(
        "read-only for {:.1}s: {attempts} transactions in the database meanwhile; all 20 events \
         processed {:.1}s after it was writable again",
        writable.duration_since(started).as_secs_f64(),
        writable.elapsed().as_secs_f64()
    );
    // 20 deliveries retried with capped backoff over ~10 s make a few hundred attempts at most;
    // a busy loop makes thousands.
    assert!(
        attempts < 2000,
        "{attempts} transactions while read-only: a busy loop?"
    );

    let retries = common::metric(svc.metrics_addr, "mail_db_retries_total")
        .await
        .expect("mail_db_retries_total on /metrics");
    println!("mail_db_retries_total {retries}");
    // At least the CONSUMER_CONCURRENCY (8) deliveries in flight during the window failed and
    // were retried (the others waited for a free slot).
    assert!(
        retries >= 8.0,
        "the delayed deliveries were retried: {retries}"
    );

    // The mailer's own pooled sessions may still be read-only (its retry is not this test's
    // subject): end them, as a switchover would, and every mail goes out.
    terminate_sessions(&admin, &db).await;
    let s = eventually("every mail sent", 120, || async {
        let mut client = svc.client.clone();
        let s = client
            .get_status(outbox_proto::mail::v1::GetStatusRequest {})
            .await
            .ok()?
            .into_inner();
        (s.unsent_mails == 0 && s.processed == 21).then_some(s)
    })
    .await;
    assert_eq!((s.dead_lettered, s.held, s.skipped), (0, 0, 0));
    for order in 2..=11 {
        assert_eq!(svc.seqs(order).await.len(), 2, "order {order}");
    }
    let conn = Connection::connect(&outbox_testkit::amqp_url(), ConnectionProperties::default())
        .await
        .expect("connect");
    let ch = conn.create_channel().await.expect("channel");
    let dead = ch
        .basic_get(
            names.dead_letter_queue().as_str().into(),
            BasicGetOptions::default(),
        )
        .await
        .expect("basic.get");
    assert!(dead.is_none(), "nothing dead-lettered");
    outbox_support::amqp::close(&conn, "bye").await;
    direct.close().await;
    svc.stop().await;
    names.cleanup().await;
}

async fn fails(conn: &mut PgConnection, sql: &str) -> sqlx::Error {
    sqlx::query(AssertSqlSafe(sql.to_owned()))
        .execute(conn)
        .await
        .expect_err(sql)
}

#[tokio::test]
async fn real_postgres_errors_are_classified() {
    let url = format!("{}/postgres", outbox_testkit::pg_server_url());
    let mut conn = PgConnection::connect(&url).await.expect("connect");
    // The data: poison.
    for sql in [
        "select 1/0",
        "select 'x'::int",
        "select 'abc'::varchar(2)::char(1)::int",
    ] {
        let e = fails(&mut conn, sql).await;
        assert_eq!(classify(&e), Failure::Poison, "{sql}: {e}");
    }
    // A NUL in a text value (what a hostile recipient or header would carry).
    let e = sqlx::query("select $1::text")
        .bind("a\0b")
        .execute(&mut conn)
        .await
        .expect_err("NUL");
    assert_eq!(classify(&e), Failure::Poison, "NUL: {e}");
    // The database: retried.
    let e = fails(&mut conn, "select * from no_such_table_here").await;
    assert_eq!(classify(&e), Failure::Transient, "{e}");
    sqlx::raw_sql("set statement_timeout = '20ms'")
        .execute(&mut conn)
        .await
        .expect("set");
    let e = fails(&mut conn, "select pg_sleep(1)").await;
    assert_eq!(classify(&e), Failure::Transient, "statement timeout: {e}");
    sqlx::raw_sql("reset statement_timeout; set default_transaction_read_only = on")
        .execute(&mut conn)
        .await
        .expect("set");
    let table = outbox_testkit::unique("never_created");
    let e = fails(&mut conn, &format!("create table {table} (x int)")).await;
    assert_eq!(classify(&e), Failure::Reconnect, "read-only: {e}");

    // A terminated session (a restart, a switchover, an operator).
    let mut victim = PgConnection::connect(&url).await.expect("connect");
    let pid: i32 = sqlx::query_scalar("select pg_backend_pid()")
        .fetch_one(&mut victim)
        .await
        .expect("pid");
    sqlx::query("select pg_terminate_backend($1)")
        .bind(pid)
        .execute(&mut conn)
        .await
        .expect("terminate");
    let e = sqlx::query("select 1")
        .execute(&mut victim)
        .await
        .expect_err("terminated");
    assert_eq!(classify(&e), Failure::Reconnect, "terminated: {e}");
}
