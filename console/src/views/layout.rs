//! The page frame: title, navigation, who is signed in, the scripts (htmx and the console's own
//! few lines, both embedded in the binary).

use axum::response::Html;
use maud::{DOCTYPE, Markup, html};

use crate::paths::{NAV, Route};

/// Who is signed in, as the page frame shows it, and the sign-out form's token.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    pub user: &'a str,
    /// `viewer` or `operator`.
    pub role: &'a str,
    pub sign_out_token: &'a str,
}

fn head(title: &str) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            title { (title) " · outbox console" }
            style { (maud::PreEscaped(STYLE)) }
            script src=(Route::Htmx) defer {}
            script src=(Route::ConsoleJs) defer {}
        }
    }
}

/// The document: head, a header with `nav`, the title and `content`.
fn document(title: &str, header: Markup, content: Markup) -> Html<String> {
    Html(
        html! {
            (DOCTYPE)
            html lang="en" {
                (head(title))
                body {
                    a.skip href="#main" { "Skip to content" }
                    header { (header) }
                    main #main {
                        h1 { (title) }
                        (content)
                    }
                }
            }
        }
        .into_string(),
    )
}

/// A full page for a signed-in user.
pub fn page(title: &str, frame: Frame<'_>, content: Markup) -> Html<String> {
    let header = html! {
        nav aria-label="Pages" {
            ul { @for (route, label) in NAV { li { a href=(route) { (label) } } } }
        }
        form.signout method="post" action=(Route::SignOut) {
            span { "Signed in as " strong { (frame.user) } " (" (frame.role) ")" }
            input type="hidden" name="csrf" value=(frame.sign_out_token);
            button type="submit" { "Sign out" }
        }
    };
    document(title, header, content)
}

/// A page without a session: sign-in, errors.
pub fn bare(title: &str, content: Markup) -> Html<String> {
    let header = html! {
        nav aria-label="Pages" { ul { li { a href=(Route::Overview) { "Overview" } } } }
    };
    document(title, header, content)
}

/// An error or a refusal: what happened, and the way back.
pub fn message_page(title: &str, message: &str) -> Html<String> {
    bare(
        title,
        html! {
            p.error role="alert" { (message) }
            p { a href=(Route::Overview) { "Back to the overview" } }
        },
    )
}

const STYLE: &str = "
body{font-family:system-ui,sans-serif;margin:0;color:#1b1b1b;background:#fafafa}
header{display:flex;justify-content:space-between;align-items:center;background:#22313f;color:#fff;padding:.4rem 1rem;flex-wrap:wrap}
header a{color:#fff}
nav ul{list-style:none;display:flex;gap:1rem;margin:0;padding:0;flex-wrap:wrap}
main{padding:1rem 1.5rem;max-width:80rem}
table{border-collapse:collapse;margin:.5rem 0}
th,td{border-bottom:1px solid #ddd;padding:.25rem .6rem;text-align:left;vertical-align:top}
.figures{display:grid;grid-template-columns:repeat(auto-fill,minmax(14rem,1fr));gap:.8rem}
.figure{background:#fff;border:1px solid #ccd;border-radius:.4rem;padding:.6rem}
.figure a{font-size:1.6rem;font-weight:600;text-decoration:none}
.bad{color:#a00}.ok{color:#060}
.error{background:#fee;border:1px solid #c66;padding:.6rem}
.stopped{background:#fff3cd}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:.5rem;background:#fff;color:#000;padding:.3rem}
:focus-visible{outline:3px solid #f90;outline-offset:2px}
form.filters label,form.inline label{margin-right:.8rem}
ol.timeline li{margin:.3rem 0}
.signout{display:flex;gap:.5rem;align-items:center}
";
