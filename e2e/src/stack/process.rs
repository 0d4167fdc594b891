//! One service process of a [`super::Stack`]: started, killed and started again with the same
//! settings.

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    process::Stdio,
    time::{Duration, Instant},
};

use anyhow::{Context, bail};
use tokio::process::{Child, Command};
use tonic::transport::{Channel, Endpoint};
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

use super::free_addr;

/// One service process that can be killed and started again with the same settings.
#[derive(Debug)]
pub struct ServiceProc {
    pub name: String,
    bin: PathBuf,
    env: Vec<(String, String)>,
    pub grpc_addr: SocketAddr,
    pub metrics_addr: SocketAddr,
    pub log_path: PathBuf,
    child: Option<Child>,
    /// How often it was started (1 after the first start).
    pub starts: u32,
}

impl ServiceProc {
    /// Service `name` of binary `bin` with `env`, on free gRPC and metrics ports of its own
    /// (`GRPC_ADDR`, `METRICS_ADDR`), logging to `log_dir/<name>.log`; not started yet.
    pub fn new(
        name: String,
        bin: PathBuf,
        mut env: Vec<(String, String)>,
        log_dir: &Path,
    ) -> anyhow::Result<Self> {
        let grpc_addr = free_addr()?;
        let metrics_addr = free_addr()?;
        env.push(("GRPC_ADDR".into(), grpc_addr.to_string()));
        env.push(("METRICS_ADDR".into(), metrics_addr.to_string()));
        let log_path = log_dir.join(format!("{name}.log"));
        Ok(Self {
            name,
            bin,
            env,
            grpc_addr,
            metrics_addr,
            log_path,
            child: None,
            starts: 0,
        })
    }

    /// Starts the process (appending to its log) and waits until its gRPC health says SERVING.
    pub async fn start(&mut self) -> anyhow::Result<()> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log_path)
            .with_context(|| format!("opening {}", self.log_path.display()))?;
        let child = Command::new(&self.bin)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", self.bin.display()))?;
        self.child = Some(child);
        self.starts += 1;
        self.wait_ready(Duration::from_secs(60)).await
    }

    /// Sets `key` to `value` in the environment of the next [`ServiceProc::start`] (a redeploy
    /// with another setting).
    pub fn set_env(&mut self, key: &str, value: &str) {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_owned(), value.to_owned()));
    }

    /// The value `key` has in the environment of the next [`ServiceProc::start`].
    pub fn env(&self, key: &str) -> Option<&str> {
        self.env
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The running process's pid.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(|c| c.id())
    }

    /// True while the process runs.
    pub fn is_running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }

    /// SIGKILL: no shutdown code runs, as in a crash.
    pub async fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
    }

    /// SIGSTOP / SIGCONT: freezes the process without closing its connections (a hung
    /// instance), or lets it go on.
    pub async fn signal(&self, signal: &str) -> anyhow::Result<()> {
        let pid = self
            .child
            .as_ref()
            .and_then(Child::id)
            .with_context(|| format!("{} is not running", self.name))?;
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &pid.to_string()])
            .status()
            .await?;
        anyhow::ensure!(status.success(), "kill -{signal} {pid} failed");
        Ok(())
    }

    /// SIGTERM, then waits for a graceful exit (SIGKILL after `grace`).
    pub async fn terminate(&mut self, grace: Duration) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        if let Some(pid) = child.id() {
            let _ = Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status()
                .await;
        }
        if tokio::time::timeout(grace, child.wait()).await.is_err() {
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
    }

    async fn wait_ready(&mut self, timeout: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            if !self.is_running() {
                bail!(
                    "{} exited during start-up; the end of {}:\n{}",
                    self.name,
                    self.log_path.display(),
                    self.log_tail()
                );
            }
            if let Ok(channel) = self.channel().await {
                let serving = HealthClient::new(channel)
                    .check(HealthCheckRequest {
                        service: String::new(),
                    })
                    .await
                    .map(|r| r.into_inner().status == 1)
                    .unwrap_or(false);
                if serving {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                bail!(
                    "{} not healthy after {timeout:?}; the end of {}:\n{}",
                    self.name,
                    self.log_path.display(),
                    self.log_tail()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The last lines of the process's log, for a failure message (CI keeps no files).
    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log_path).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// A gRPC channel to this process.
    pub async fn channel(&self) -> anyhow::Result<Channel> {
        Ok(Endpoint::from_shared(format!("http://{}", self.grpc_addr))?
            .connect_timeout(Duration::from_secs(2))
            .timeout(Duration::from_secs(10))
            .connect()
            .await?)
    }
}
