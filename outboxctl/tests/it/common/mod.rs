//! A runner for the real `outboxctl` binary against the real stack in-process ([`Stack`], from
//! the testkit).

use serde_json::Value;
use sqlx::PgPool;

pub use outbox_testkit::{
    purge,
    stack::{Stack, TOKEN, start_relay},
    wait_until,
};

/// The runner of the binary against a stack.
pub trait StackCtl {
    fn ctl(&self) -> Ctl;
}

impl StackCtl for Stack {
    fn ctl(&self) -> Ctl {
        Ctl {
            orders: self.orders.grpc_addr.to_string(),
            relay: self.relay.grpc_addr.to_string(),
            mail: self.mail.grpc_addr.to_string(),
            orders_db: self.names.orders_db.clone(),
            mail_db: self.names.mail_db.clone(),
        }
    }
}

/// The addresses the binary is pointed at.
#[derive(Debug, Clone)]
pub struct Ctl {
    pub orders: String,
    pub relay: String,
    pub mail: String,
    /// The databases the audit and the trace read.
    pub orders_db: String,
    pub mail_db: String,
}

/// What one run of the binary gave.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }

    #[track_caller]
    pub fn ok(self) -> Self {
        assert_eq!(self.code, 0, "outboxctl failed: {self:?}");
        self
    }
}

impl Ctl {
    /// Runs the change `outboxctl <args> --reason <reason>` with the admin token.
    pub async fn change(&self, args: &[&str], reason: &str) -> Run {
        let args: Vec<&str> = args.iter().copied().chain(["--reason", reason]).collect();
        self.run(Some(TOKEN), &args).await
    }

    /// Runs the change, asserting that it succeeded and said `says`.
    pub async fn change_says(&self, args: &[&str], reason: &str, says: &str) -> Run {
        let run = self.change(args, reason).await.ok();
        assert!(run.stdout.contains(says), "{run:?}");
        run
    }

    /// Runs the change `outboxctl --json <args> --reason <reason>`, asserting that it
    /// succeeded; its JSON answer.
    pub async fn change_json(&self, args: &[&str], reason: &str) -> Value {
        let args: Vec<&str> = ["--json"].into_iter().chain(args.iter().copied()).collect();
        self.change(&args, reason).await.ok().json()
    }

    /// Runs `outboxctl --json <args>` without the token, asserting that it succeeded; its JSON
    /// answer.
    pub async fn json(&self, args: &[&str]) -> Value {
        let args: Vec<&str> = ["--json"].into_iter().chain(args.iter().copied()).collect();
        self.run(None, &args).await.ok().json()
    }

    /// [`Ctl::json`] for a wait: `None` while the command fails.
    pub async fn try_json(&self, args: &[&str]) -> Option<Value> {
        let args: Vec<&str> = ["--json"].into_iter().chain(args.iter().copied()).collect();
        let run = self.run(None, &args).await;
        (run.code == 0).then(|| run.json())
    }

    /// Runs `outboxctl <args>` with the operator `test-operator` and, when given, the token.
    pub async fn run(&self, token: Option<&str>, args: &[&str]) -> Run {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_outboxctl"));
        cmd.env_remove("OUTBOXCTL_ADMIN_TOKEN")
            .env("OUTBOXCTL_ORDERS_ADDR", &self.orders)
            .env("OUTBOXCTL_RELAY_ADDR", &self.relay)
            .env("OUTBOXCTL_MAIL_ADDR", &self.mail)
            .env("OUTBOXCTL_ORDERS_DB", &self.orders_db)
            .env("OUTBOXCTL_MAIL_DB", &self.mail_db)
            .arg("--operator=test-operator")
            .args(args);
        if let Some(t) = token {
            cmd.env("OUTBOXCTL_ADMIN_TOKEN", t);
        }
        let out = cmd.output().await.expect("outboxctl runs");
        let run = Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        eprintln!(
            "$ outboxctl {}\n{}{}",
            args.join(" "),
            run.stdout,
            run.stderr
        );
        run
    }
}

/// The audit rows: (action, ids, reason, operator, detail).
pub async fn audit(pool: &PgPool) -> Vec<(String, Vec<i64>, String, Option<String>, Value)> {
    sqlx::query_as("select action, ids, reason, operator, detail from admin_actions order by id")
        .fetch_all(pool)
        .await
        .expect("admin_actions")
}
