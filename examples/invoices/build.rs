// `sqlx::migrate!` embeds the migrations at compile time; without this, adding a migration file
// does not rebuild the crate (what `sqlx migrate build-script` generates).
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
