//! Compiles the .proto files with protox (pure Rust, no system `protoc`) and keeps the encoded
//! descriptor set so that every service can serve gRPC reflection from it.

use std::{env, fs, path::PathBuf};

use prost::Message;

const PROTOS: &[&str] = &[
    "orders/v1/orders.proto",
    "orders/events/v1/events.proto",
    "relay/v1/relay.proto",
    "mail/v1/mail.proto",
    "relay/admin/v1/admin.proto",
    "mail/admin/v1/admin.proto",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let fds = protox::Compiler::new(["proto"])?
        .include_imports(true)
        .include_source_info(true)
        .open_files(PROTOS)?
        .file_descriptor_set();

    let out_dir = PathBuf::from(env::var("OUT_DIR")?);
    fs::write(out_dir.join("descriptor.bin"), fds.encode_to_vec())?;

    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_fds(fds)?;
    Ok(())
}
