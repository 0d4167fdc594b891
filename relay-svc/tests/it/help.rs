//! `relay-svc --help` is byte for byte what it was when the settings moved into shared structs and
//! the libraries' constants (`help.txt`, captured from the binary before that change), plus the
//! fleet mode's settings added after it: every flag, variable, default and sentence an operator
//! or a script reads stays.

#[test]
fn help_is_unchanged() {
    outbox_testkit::settings::assert_help_is(
        env!("CARGO_BIN_EXE_relay-svc"),
        include_str!("help.txt"),
    );
}
