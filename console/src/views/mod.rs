//! The HTML: [`layout`] (the page frame, messages), [`widgets`] (the pieces pages share: forms
//! that post, list filters, reasons), [`fragments`] (the parts the live stream sends and the
//! pages embed), [`chart`] (the overview's rates). Every template is maud: checked at compile
//! time, values escaped.

pub mod chart;
pub mod fragments;
pub mod layout;
pub mod widgets;
