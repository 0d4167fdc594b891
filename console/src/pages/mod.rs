//! One module per page: its handlers (the checks come from [`crate::extractors`], the fields
//! are read one by one, see [`crate::form`]) and its template (built of
//! [`crate::views::widgets`]).

pub mod audit;
pub mod dead_letters;
pub mod fleet;
pub mod held;
pub mod jobs;
pub mod overview;
pub mod quarantine;
pub mod sign_in;
pub mod where_is;

use axum::{
    http::{StatusCode, header},
    response::{IntoResponse, Response},
};

/// 303 to `to` (after a post).
pub fn see_other(to: &str) -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, to.to_owned())]).into_response()
}
