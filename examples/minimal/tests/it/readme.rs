//! The crates' READMEs open with this example: each one's getting-started is `src/lib.rs`, line
//! for line (without its `//!` header and the doctest's hidden `# ` lines), so the program a
//! stranger copies is the one this package runs.

const PROGRAM: &str = include_str!("../../src/lib.rs");

const READMES: [(&str, &str); 3] = [
    (
        "outbox",
        include_str!("../../../../crates/outbox/README.md"),
    ),
    (
        "outbox-relay",
        include_str!("../../../../crates/outbox-relay/README.md"),
    ),
    (
        "outbox-inbox",
        include_str!("../../../../crates/outbox-inbox/README.md"),
    ),
];

/// `src/lib.rs` without its `//!` header and the blank line after it.
fn program() -> String {
    let body: Vec<&str> = PROGRAM
        .lines()
        .skip_while(|line| line.starts_with("//!"))
        .skip_while(|line| line.is_empty())
        .collect();
    body.join("\n")
}

/// The first section's heading and its first `rust,ignore` block (the crates' doctests leave it to
/// this package: it needs all three crates), without hidden lines.
fn getting_started(readme: &str) -> (&str, String) {
    let heading = readme
        .lines()
        .find(|line| line.starts_with("## "))
        .expect("a section");
    let fence = "```rust,ignore\n";
    let start = readme.find(fence).expect("a rust,ignore block") + fence.len();
    let len = readme[start..].find("\n```\n").expect("the block ends");
    let block: Vec<&str> = readme[start..start + len]
        .lines()
        .filter(|line| *line != "#" && !line.starts_with("# "))
        .collect();
    (heading, block.join("\n"))
}

#[test]
fn each_crate_readme_opens_with_this_program() {
    let program = program();
    assert!(program.contains("pub async fn run"), "{program}");
    for (name, readme) in READMES {
        let (heading, block) = getting_started(readme);
        assert_eq!(heading, "## Getting started", "{name}: the first section");
        assert!(
            block == program,
            "{name}'s README getting-started differs from examples/minimal/src/lib.rs:\n{}",
            first_difference(&block, &program)
        );
    }
}

fn first_difference(readme: &str, program: &str) -> String {
    let (mut a, mut b) = (readme.lines(), program.lines());
    for n in 1.. {
        match (a.next(), b.next()) {
            (None, None) => break,
            (x, y) if x != y => return format!("line {n}: README {x:?}, lib.rs {y:?}"),
            _ => {}
        }
    }
    "none".into()
}
