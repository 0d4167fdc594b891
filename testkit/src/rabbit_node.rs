//! A RabbitMQ node of a test's own, beside the machine's broker: for tests that restart,
//! block or reconfigure a broker, so that they never disturb the tests sharing the machine's
//! broker (and need not run alone).
//!
//! The node is `<name>@localhost` with AMQP on the port given, Erlang distribution on that port
//! plus 20,000, and its config, database and log folders in a temporary directory owned by the
//! `rabbitmq` user (the server script runs as that user). A node of the same name left over by
//! an interrupted run is stopped first; the node is stopped and its directory removed on drop.

use std::{
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
    time::{Duration, Instant},
};

/// How long a node may take to start on a busy machine.
const START_TIMEOUT: Duration = Duration::from_secs(90);

/// A running RabbitMQ node of this test; see the module docs.
#[derive(Debug)]
pub struct RabbitNode {
    node: String,
    amqp_port: u16,
    dir: PathBuf,
}

impl RabbitNode {
    /// Starts node `<name>@localhost` listening for AMQP on `127.0.0.1:<amqp_port>` (guest may
    /// log in from anywhere) and waits until it runs. `extra_config` returns lines to add to
    /// its `rabbitmq.conf`, given the node's directory (where it may copy files the lines name,
    /// such as certificates). Blocking: call it from `spawn_blocking` in async code.
    pub fn start(name: &str, amqp_port: u16, extra_config: impl FnOnce(&Path) -> String) -> Self {
        let node = Self {
            node: format!("{name}@localhost"),
            amqp_port,
            dir: std::env::temp_dir().join(format!("outbox-rabbitmq-{name}")),
        };
        node.stop();
        let dir = &node.dir;
        let _ = std::fs::remove_dir_all(dir);
        for sub in ["mnesia", "log"] {
            std::fs::create_dir_all(dir.join(sub)).expect("the node's directories");
        }
        let config = format!(
            "listeners.tcp.default = 127.0.0.1:{amqp_port}\nloopback_users = none\n{}",
            extra_config(dir)
        );
        std::fs::write(dir.join("rabbitmq.conf"), config).expect("the node's config");
        std::fs::write(dir.join("enabled_plugins"), "[].\n").expect("the node's plugins");
        run(Command::new("chown")
            .args(["-R", "rabbitmq:rabbitmq"])
            .arg(dir));
        run(node
            .env(&mut Command::new("rabbitmq-server"))
            .arg("-detached"));
        // `await_startup` fails at once while the node is not up yet: ask until it answers.
        let deadline = Instant::now() + START_TIMEOUT;
        while !node
            .ctl(&["--timeout", "10", "await_startup"])
            .status
            .success()
        {
            assert!(
                Instant::now() < deadline,
                "node {} did not start:\n{}",
                node.node,
                node.log()
            );
            std::thread::sleep(Duration::from_millis(500));
        }
        node
    }

    /// The Erlang node name (`rabbitmqctl -n` takes it).
    pub fn name(&self) -> &str {
        &self.node
    }

    /// The node's AMQP URL with the tests' credentials.
    pub fn url(&self) -> String {
        format!("amqp://guest:guest@127.0.0.1:{}/%2f", self.amqp_port)
    }

    /// `rabbitmqctl -n <node> <args>`, waited for (blocking).
    pub fn ctl(&self, args: &[&str]) -> Output {
        Command::new("rabbitmqctl")
            .args(["-n", &self.node])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("rabbitmqctl runs")
    }

    /// The node's log files, for a failure message.
    pub fn log(&self) -> String {
        let mut out = String::new();
        for entry in std::fs::read_dir(self.dir.join("log"))
            .into_iter()
            .flatten()
            .flatten()
        {
            out.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
        }
        out
    }

    fn env<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        let d = &self.dir;
        cmd.env("RABBITMQ_NODENAME", &self.node)
            .env("RABBITMQ_NODE_PORT", self.amqp_port.to_string())
            .env(
                "RABBITMQ_DIST_PORT",
                (u32::from(self.amqp_port) + 20_000).to_string(),
            )
            .env("RABBITMQ_CONFIG_FILE", d.join("rabbitmq.conf"))
            .env("RABBITMQ_MNESIA_BASE", d.join("mnesia"))
            .env("RABBITMQ_LOG_BASE", d.join("log"))
            .env("RABBITMQ_ENABLED_PLUGINS_FILE", d.join("enabled_plugins"))
    }

    fn stop(&self) {
        self.ctl(&["stop"]);
    }
}

impl Drop for RabbitNode {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn run(cmd: &mut Command) {
    let out = cmd.stdin(Stdio::null()).output().expect("runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
