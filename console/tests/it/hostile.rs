//! Hostile input on every page and every form: each query parameter and form field gets NUL and
//! other control characters, numbers and durations too large for any type, negatives, long
//! strings, percent escapes that are not UTF-8, and nothing. Each bad value is a 4xx whose page
//! names the field; none is a 5xx.

use outbox_proto::orders::v1::OrderStatus;
use reqwest::StatusCode;

use crate::{
    common::{Browser, Console, OPERATOR, Stack, form_token, wait_until},
    fleet::{PASSWORD, fresh_database, with_password},
};

/// Hostile values, as they travel in a query string or a form body (percent-encoded already,
/// so that bytes that are not UTF-8 reach the console as they are).
const HOSTILE: &[&str] = &[
    "%00",
    "a%00b",
    "%01",
    "%1B%5B31m",
    "%7F",
    "a%0Ab",
    "%C2%85",
    "%FF",
    "%C3%28",
    "%ED%A0%80",
    "",
    "+",
    "-1",
    "0",
    "-9223372036854775808",
    "9223372036854775807",
    "9223372036854775808",
    "99999999999999999999999999999",
    "18446744073709551615",
    "1e400",
    "NaN",
    "1.5",
    "3000000y",
    "9223372036854775807s",
    "18446744073709551616ms",
    "584942417355y",
    "1:99999999999999999999",
    "-1:-1",
    "2147483648:1",
    "9223372036854775807:9223372036854775807",
    "0:1,0:2,x",
];

/// A query string or form body: `base` with `field` set to the (encoded) `value`.
fn encoded(base: &[(&str, &str)], field: &str, value: &str) -> String {
    let mut s = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in base.iter().filter(|(k, _)| *k != field) {
        s.append_pair(k, v);
    }
    let mut out = s.finish();
    if !out.is_empty() {
        out.push('&');
    }
    out.push_str(field);
    out.push('=');
    out.push_str(value);
    out
}

fn long() -> String {
    "x".repeat(10_000)
}

/// The answer to a hostile value is a page, a redirect, or a 4xx; a 400 names the field.
#[track_caller]
fn check(what: &str, field: &str, status: StatusCode, body: &str) {
    assert!(
        !status.is_server_error(),
        "{what}: {field} gave {status}: {body}"
    );
    if status == StatusCode::BAD_REQUEST {
        assert!(
            body.contains(&format!("{field}: ")),
            "{what}: the 400 does not name {field}: {body}"
        );
    }
}

/// A page: its path, the fields that make it valid, and the fields.
type Page = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static [&'static str],
);

/// Every page's query parameters.
const PAGES: &[Page] = &[
    ("/", &[], &["x"]),
    ("/where", &[], &["order", "seq", "shard", "db"]),
    (
        "/quarantine",
        &[],
        &["shard", "db", "order", "type", "reason", "min_age", "after"],
    ),
    ("/held", &[], &["order", "reason", "min_age", "after"]),
    (
        "/dead-letters",
        &[],
        &["order", "reason", "min_age", "after"],
    ),
    ("/audit", &[], &["stage", "db"]),
    (
        "/replay",
        &[("order", "1"), ("shard", "0")],
        &["order", "shard", "db", "from", "to"],
    ),
    ("/fleet", &[], &["x"]),
];

#[tokio::test]
async fn every_field_of_every_page_answers_hostile_values_with_a_4xx_naming_it() {
    let stack = Stack::start().await;
    let console = Console::start(&stack, "1h", &[]).await;
    let op = console.signed_in(OPERATOR).await;

    // The defects first: a too-large age and a NUL in a text filter were a 503.
    for (path, field) in [
        ("/dead-letters?min_age=9223372036854775807", "min_age"),
        ("/quarantine?min_age=3000000y", "min_age"),
        ("/held?min_age=584942417355y", "min_age"),
        ("/dead-letters?reason=%00", "reason"),
        ("/held?reason=a%01b", "reason"),
        ("/quarantine?type=%00", "type"),
        ("/quarantine?reason=%FF", "reason"),
    ] {
        let r = op.get(path).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{path}: {}", r.body);
        assert!(r.body.contains(&format!("{field}: ")), "{path}: {}", r.body);
    }

    let long = long();
    for (path, base, fields) in PAGES {
        for field in *fields {
            for value in HOSTILE.iter().copied().chain([long.as_str()]) {
                let url = format!("{path}?{}", encoded(base, field, value));
                let r = op.get(&url).await;
                check(&url, field, r.status, &r.body);
            }
        }
    }
    for value in ["%00", "-1", "99999999999999999999", "%FF", "x%20y"] {
        let r = op.get(&format!("/jobs/{value}")).await;
        check(&format!("/jobs/{value}"), "id", r.status, &r.body);
    }

    console.stop().await;
    stack.cleanup().await;
}

/// Posts `body` (already encoded) to `path` as the console's own page would.
async fn post_raw(b: &Browser, path: &str, body: String) -> crate::common::Answer {
    let r = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
        .post(format!("{}{path}", b.base))
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .header(reqwest::header::ORIGIN, &b.base)
        .header(
            reqwest::header::COOKIE,
            b.cookie.clone().unwrap_or_default(),
        )
        .body(body)
        .send()
        .await
        .expect("POST");
    let status = r.status();
    crate::common::Answer {
        status,
        body: r.text().await.expect("body"),
        cookie: None,
        location: None,
    }
}

#[tokio::test]
async fn every_field_of_every_form_answers_hostile_values_with_a_4xx_naming_it() {
    let mut stack = Stack::start().await;
    // Something for every form: a dead letter, a mailed order, a quarantined row, a held chain.
    stack.redeploy_mail("nobody").await;
    stack.upsert(3, OrderStatus::Pending).await;
    wait_until("a dead letter", || async {
        sqlx::query_scalar::<_, i64>("select count(*) from dead_letters")
            .fetch_one(&stack.mail_pool)
            .await
            .expect("dead letters")
            == 1
    })
    .await;
    stack.redeploy_mail("guest").await;
    let a1 = stack.upsert(1, OrderStatus::Pending).await;
    stack.wait_until_sent("order 1 mailed", 1, &[a1]).await;
    let q = stack.insert_unencodable(2).await;
    // A fleet database for the fleet's forms (dropped when `made` goes, passed or failed).
    let made = outbox_testkit::Made::new();
    let fleet_url = with_password(&fresh_database(&made, "console_hostile_fleet").await);
    let console = Console::start(
        &stack,
        "1h",
        &[&format!("--fleet-database-url={fleet_url}")],
    )
    .await;
    let op = console.signed_in(OPERATOR).await;
    wait_until("the row quarantined", || async {
        op.page("/quarantine")
            .await
            .contains(&format!(r#"data-seq="{q}""#))
    })
    .await;
    let q = q.to_string();

    // The forms, each with the page that holds it, and fields that make it valid but act on
    // nothing that exists (a hostile value that is valid must not change anything).
    let quarantine = op.page("/quarantine").await;
    let requeue = op
        .post(
            "/quarantine/preview",
            &[
                ("csrf", &form_token(&quarantine, "/quarantine/preview")),
                ("action", "requeue"),
                ("shard", "0"),
                ("seq", &q),
            ],
        )
        .await
        .body;
    let drop = op
        .post(
            "/quarantine/preview",
            &[
                ("csrf", &form_token(&quarantine, "/quarantine/preview")),
                ("action", "drop"),
                ("shard", "0"),
                ("seq", &q),
            ],
        )
        .await
        .body;
    let dead = op.page("/dead-letters").await;
    let redrive = op
        .post(
            "/dead-letters/preview",
            &[
                ("csrf", &form_token(&dead, "/dead-letters/preview")),
                ("action", "matching"),
            ],
        )
        .await
        .body;
    let replay = op.page("/replay?order=1").await;
    type Form<'a> = (&'a str, &'a str, Vec<(&'a str, &'a str)>, &'a [&'a str]);
    let forms: Vec<Form> = vec![
        (
            "/quarantine/preview",
            &quarantine,
            vec![("action", "requeue"), ("shard", "0"), ("seq", "999999")],
            &["action", "shard", "seq", "order"],
        ),
        (
            "/quarantine/requeue",
            &requeue,
            vec![("shard", "0"), ("seqs", "999999"), ("reason", "r")],
            &["shard", "seqs", "reason"],
        ),
        (
            "/quarantine/drop",
            &drop,
            vec![("shard", "0"), ("seqs", "999999"), ("reason", "r")],
            &["shard", "seqs", "reason"],
        ),
        (
            "/dead-letters/preview",
            &dead,
            vec![("action", "selected"), ("sel", "0:999999")],
            &["action", "sel", "order", "reason", "min_age"],
        ),
        (
            "/dead-letters/redrive",
            &redrive,
            vec![
                ("mode", "seqs"),
                ("value", "0:999999"),
                ("target", "1"),
                ("reason", "r"),
            ],
            &["mode", "value", "target", "reason"],
        ),
        (
            "/replay",
            &replay,
            vec![("order", "999999"), ("shard", "0"), ("reason", "r")],
            &["order", "shard", "from", "to", "reason"],
        ),
    ];
    let long = long();
    for (path, page, base, fields) in &forms {
        let token = form_token(page, path);
        let mut base = base.clone();
        base.push(("csrf", &token));
        for field in *fields {
            for value in HOSTILE.iter().copied().chain([long.as_str()]) {
                let r = post_raw(&op, path, encoded(&base, field, value)).await;
                check(
                    &format!("POST {path} {field}={value:.40}"),
                    field,
                    r.status,
                    &r.body,
                );
            }
        }
    }
    // The fleet's forms. An add whose fields are all valid adds a database: each post has a
    // name and a source id of its own, so that a hostile value that is valid is added, not
    // refused for a name or an id another post took. The URL is the fleet database's own (no
    // outbox table: any source id agrees with it).
    let fleet_page = op.page("/fleet").await;
    let add = form_token(&fleet_page, "/fleet/add");
    let mut n = 1000;
    for field in ["name", "source_id", "url", "table", "exchange", "reason"] {
        for value in HOSTILE.iter().copied().chain([long.as_str()]) {
            n += 1;
            let (name, id) = (format!("h{n}"), n.to_string());
            let base = [
                ("csrf", add.as_str()),
                ("name", name.as_str()),
                ("source_id", id.as_str()),
                ("url", fleet_url.as_str()),
                ("exchange", "orders.events"),
                ("reason", "r"),
            ];
            let r = post_raw(&op, "/fleet/add", encoded(&base, field, value)).await;
            check(
                &format!("POST /fleet/add {field}={value:.40}"),
                field,
                r.status,
                &r.body,
            );
            assert!(!r.body.contains(PASSWORD), "{}", r.body);
        }
    }
    // Drain and remove of a database that is not there (a valid hostile name may be one the
    // adds above registered: acting on it is a page, not a 5xx).
    let fleet_page = op.page("/fleet").await;
    for (path, fields) in [
        ("/fleet/drain", &["name", "reason"][..]),
        ("/fleet/remove", &["name", "force", "reason"][..]),
    ] {
        let token = form_token(&fleet_page, path);
        let base = [("csrf", token.as_str()), ("name", "nope"), ("reason", "r")];
        for field in fields {
            for value in HOSTILE.iter().copied().chain([long.as_str()]) {
                let r = post_raw(&op, path, encoded(&base, field, value)).await;
                check(
                    &format!("POST {path} {field}={value:.40}"),
                    field,
                    r.status,
                    &r.body,
                );
            }
        }
    }
    // The sign-in's token and the form token itself: refused, never a 5xx.
    for value in HOSTILE.iter().copied().chain([long.as_str()]) {
        let r = post_raw(&console.browser(), "/sign-in", encoded(&[], "token", value)).await;
        check("POST /sign-in", "token", r.status, &r.body);
        let r = post_raw(&op, "/replay", encoded(&[("order", "1")], "csrf", value)).await;
        assert!(r.status.is_client_error(), "csrf={value:.40}: {}", r.body);
    }
    // Nothing acted: the quarantined row and the dead letter are where they were.
    let rows: i64 = sqlx::query_scalar("select count(*) from outbox_quarantine")
        .fetch_one(&stack.orders_pool)
        .await
        .expect("quarantine");
    assert_eq!(rows, 1);

    console.stop().await;
    stack.cleanup().await;
    made.remove().await.expect("the fleet database dropped");
}
