//! The invoices example's integration tests: one binary, as in every package of the workspace
//! (each test binary links the whole dependency tree), one module per concern.

mod end_to_end;
