//! The HTML: [`layout`] (the page frame, messages), [`fragments`] (the parts the live stream
//! sends and the pages embed). Every template is maud: checked at compile time, values escaped.

pub mod fragments;
pub mod layout;
