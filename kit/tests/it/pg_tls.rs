//! TLS to PostgreSQL through `DATABASE_URL` (`sslmode`, `sslrootcert`), against the machine's
//! server (which has `ssl = on`).

use outbox_kit::db;
use outbox_testkit::{pki::TestPki, secrets::PASSWORD};

/// The tests' server URL with [`PASSWORD`] planted (the server trusts the test user, so the
/// password is never checked, only never shown), database `db` and the query `query`.
fn url_with_password(db: &str, query: &str) -> String {
    let url = outbox_testkit::pg_url_via(outbox_testkit::pg_addr(), db);
    let (scheme, rest) = url.split_once("://").expect("a URL");
    let rest = match rest.split_once('@') {
        Some((user, host)) => format!("{}:{PASSWORD}@{host}", user.split(':').next().unwrap()),
        None => format!("postgres:{PASSWORD}@{rest}"),
    };
    format!("{scheme}://{rest}?{query}")
}

#[tokio::test]
async fn sslmode_require_connects_over_tls() {
    let url = url_with_password(&outbox_testkit::unique("outbox_pgtls"), "sslmode=require");
    let pool = db::connect(&url, 1)
        .await
        .expect("connects with sslmode=require");
    let ssl: bool = sqlx::query_scalar("select ssl from pg_stat_ssl where pid = pg_backend_pid()")
        .fetch_one(&pool)
        .await
        .expect("pg_stat_ssl");
    assert!(ssl, "the session is encrypted");
    let name: String = sqlx::query_scalar("select current_database()")
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    outbox_testkit::drop_database(&name)
        .await
        .expect("drop database");
}

#[tokio::test]
async fn sslmode_disable_connects_in_plaintext() {
    let url = url_with_password("postgres", "sslmode=disable");
    let pool = db::connect(&url, 1).await.expect("connects");
    let ssl: bool = sqlx::query_scalar("select ssl from pg_stat_ssl where pid = pg_backend_pid()")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert!(!ssl, "sslmode=disable stays plaintext");
}

#[tokio::test]
async fn verify_full_with_a_wrong_ca_stops_start_up_naming_database_url() {
    let pki = TestPki::new("pgwrong");
    let query = format!(
        "sslmode=verify-full&sslrootcert={}",
        pki.ca_file().display()
    );
    let url = url_with_password("postgres", &query);

    let err = db::connect(&url, 1)
        .await
        .expect_err("the server's certificate is not from this CA");
    outbox_testkit::secrets::assert_error_names_setting(&err, "DATABASE_URL", &url);
    let text = format!("{err:#}");
    assert!(text.contains("certificate"), "says why: {text}");

    // The services that wait for their database do not wait for this one: a certificate that
    // does not verify needs a person, not a retry.
    let options = db::options(&url.as_str().into()).unwrap();
    let err = db::prepare(&options, &sqlx::migrate::Migrator::DEFAULT)
        .await
        .expect_err("refused");
    assert!(!err.unreachable, "not a reason to wait: {err}");
    let text = format!("{err:#}");
    assert!(
        text.contains("DATABASE_URL") && !text.contains(PASSWORD),
        "{text}"
    );

    // An unreadable sslrootcert is named too.
    let url = url_with_password(
        "postgres",
        "sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
    );
    let err = db::connect(&url, 1).await.expect_err("no such file");
    outbox_testkit::secrets::assert_error_names_setting(&err, "DATABASE_URL", &url);
}
