//! One image built once for every service, pinned infrastructure images, and a Dockerfile as a
//! Docker user expects it.

use super::file::{compose, service, services};

#[test]
fn one_image_built_once_and_pinned_infrastructure() {
    let compose = compose();
    let mut builders = Vec::new();
    for (name, svc) in services(&compose) {
        let image = svc["image"]
            .as_str()
            .unwrap_or_else(|| panic!("{name} names its image: {svc:?}"));
        if svc.get("build").is_some() {
            builders.push(name.clone());
            assert_eq!(svc["pull_policy"].as_str(), Some("build"), "{name} builds");
        } else if image == "outbox:local" {
            assert_eq!(
                svc["pull_policy"].as_str(),
                Some("never"),
                "{name} runs the built image, never pulls it"
            );
        } else {
            let (_, tag) = image
                .rsplit_once(':')
                .unwrap_or_else(|| panic!("{name}: {image} is pinned"));
            assert!(
                tag != "latest" && tag.contains('.'),
                "{name}: {image} is pinned to a minor version"
            );
        }
    }
    assert_eq!(
        builders,
        ["orders-svc"],
        "exactly one service builds the image"
    );

    let volumes = &compose["volumes"];
    for (name, mount) in [
        ("postgres", "/var/lib/postgresql/data"),
        ("rabbitmq", "/var/lib/rabbitmq"),
    ] {
        let declared = format!("{:?}", service(&compose, name)["volumes"]);
        let volume = format!("{name}-data");
        assert!(
            declared.contains(&format!("{volume}:{mount}")),
            "{name} keeps its data in a named volume: {declared}"
        );
        assert!(volumes.get(volume.as_str()).is_some(), "{volume} declared");
    }
    assert_eq!(
        service(&compose, "rabbitmq")["hostname"].as_str(),
        Some("rabbitmq"),
        "RabbitMQ's node name (and data directory) does not change with the container"
    );
    let pg_check = format!("{:?}", service(&compose, "postgres")["healthcheck"]["test"]);
    assert!(
        pg_check.contains("127.0.0.1"),
        "PostgreSQL checked over TCP: {pg_check}"
    );
}

#[test]
fn dockerfile_is_what_a_docker_user_expects() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../Dockerfile");
    let text = std::fs::read_to_string(path).expect("Dockerfile exists");
    assert!(
        text.starts_with("# syntax="),
        "the syntax directive is the first line"
    );
    for port in ["50051", "50052", "50053", "9101", "9102", "9103"] {
        assert!(
            text.lines()
                .any(|l| l.starts_with("EXPOSE") && l.contains(port)),
            "EXPOSE {port}"
        );
    }
    assert!(text.contains("strip /out/"), "binaries are stripped");
}
