//! Tests of the real binaries: run one for a while or to its end, on ports of its own, or a test
//! in a process of its own.

/// Runs a service binary that is expected to keep running: waits `for_`, reports whether it was
/// still running, then kills it (the child this call started) and returns everything it wrote to
/// stdout and stderr.
pub fn run_for(command: &mut std::process::Command, for_: std::time::Duration) -> (bool, String) {
    use std::{io::Read, process::Stdio};

    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    std::thread::sleep(for_);
    let running = child.try_wait().expect("status").is_none();
    if running {
        child.kill().expect("kill the child this test started");
    }
    child.wait().expect("reaped");
    let mut all = String::new();
    if let Some(mut out) = child.stdout.take() {
        out.read_to_string(&mut all).expect("stdout");
    }
    if let Some(mut err) = child.stderr.take() {
        err.read_to_string(&mut all).expect("stderr");
    }
    (running, all)
}

/// The service binary at `binary` pointed at servers that are not there (PostgreSQL, database
/// `database`, and RabbitMQ on port 1), its own ports 0 and `RUST_LOG=info`: it starts and
/// keeps retrying, logging, for as long as it runs.
pub fn against_absent_servers(binary: &str, database: &str) -> std::process::Command {
    let mut cmd = on_free_ports(binary);
    cmd.env(
        "DATABASE_URL",
        format!("postgres://postgres@127.0.0.1:1/{database}"),
    )
    .env("AMQP_URL", "amqp://guest:guest@127.0.0.1:1/%2f")
    .env("RUST_LOG", "info");
    cmd
}

/// A local address for a child process to listen on: bound here, then released for the child to
/// take. The port is drawn below Linux's ephemeral range (32768–60999), where the outgoing
/// connections of every test beside this one take their ports, and below the test brokers'
/// fixed ports (25672 and up): a port from `127.0.0.1:0` could be taken by one of those
/// connections before the child binds it.
pub fn free_local_addr() -> std::io::Result<std::net::SocketAddr> {
    use std::hash::{BuildHasher, RandomState};
    const PORTS: std::ops::Range<u16> = 10_000..25_000;
    let span = u64::from(PORTS.end - PORTS.start);
    let mut last = None;
    for _ in 0..64 {
        let draw = RandomState::new().hash_one(std::time::Instant::now()) % span;
        let port = PORTS.start + u16::try_from(draw).expect("below the span");
        match std::net::TcpListener::bind(("127.0.0.1", port)) {
            Ok(listener) => return listener.local_addr(),
            Err(e) => last = Some(e),
        }
    }
    Err(last.expect("64 tries"))
}

/// The service binary at `binary` with its gRPC and `/metrics` listeners on free ports
/// (`GRPC_ADDR` and `METRICS_ADDR` `127.0.0.1:0`), so that it runs beside anything.
pub fn on_free_ports(binary: &str) -> std::process::Command {
    let mut cmd = std::process::Command::new(binary);
    cmd.env("GRPC_ADDR", "127.0.0.1:0")
        .env("METRICS_ADDR", "127.0.0.1:0");
    cmd
}

/// Runs a service binary to its end: (succeeded, stdout + stderr).
pub fn run_to_end(command: &mut std::process::Command) -> (bool, String) {
    let out = command.output().expect("the binary runs");
    (out.status.success(), output_text(&out))
}

/// What a finished command wrote: its stdout, then its stderr.
pub fn output_text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs a service binary that must refuse to start: asserts it fails and that its output says
/// each of `says` (the settings it names, the bad value). Returns the output.
pub fn assert_refuses(command: &mut std::process::Command, says: &[&str]) -> String {
    let (ok, all) = run_to_end(command);
    assert!(!ok, "refuses to start: {all}");
    for said in says {
        assert!(all.contains(said), "says {said:?}: {all}");
    }
    all
}

/// The variable that tells a child test process which test [`run_in_own_process`] started it for.
const OWN_PROCESS_VAR: &str = "OUTBOX_TEST_OWN_PROCESS";

/// For a test that reads process-wide state which the other tests of its binary would disturb
/// (the metrics recorder's counters start at 0 only in a process nothing else has recorded in):
/// runs the test again, alone, in a child process of the test binary, and asserts that it passed
/// there, forwarding its output. Returns `true` in the binary's own process once that is done
/// (the test then returns at once) and `false` in the child, where the test goes on with its
/// body.
///
/// `test` is the test's path in its binary as `concat!(module_path!(), "::name")` spells it
/// (the crate name in front is dropped).
pub fn run_in_own_process(test: &str) -> bool {
    let name = test.split_once("::").map_or(test, |(_, path)| path);
    if std::env::var(OWN_PROCESS_VAR).is_ok_and(|v| v == name) {
        return false;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let (passed, output) = run_to_end(
        std::process::Command::new(exe)
            .args([name, "--exact", "--nocapture", "--test-threads=1"])
            .env(OWN_PROCESS_VAR, name),
    );
    // Through the harness's capture: shown on failure or with --nocapture, as the test's own.
    print!("{output}");
    assert!(passed, "{name} failed in its own process");
    // A name that matched no test would pass without running anything.
    assert!(
        output.contains("test result: ok. 1 passed"),
        "{name} did not run in its own process"
    );
    true
}
