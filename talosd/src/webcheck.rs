//! The daemon side of the static web verifier: the pure checks live in the `talos-webcheck`
//! crate; this module gives them the request's facts from the task contract, and runs the
//! interaction the request names ("clicking #a updates #b") in a headless browser when one is
//! installed, deciding whether that check was not run, passed or failed.
//!
//! [`check`] receives the contents of the web files the turn is about ([`site_files`] reads the
//! files the turn changed and what they link to, or the whole site for a whole-site diagnosis)
//! and the contract's web facts. Decision records:
//! docs/decisions/0013-static-web-verifier.md, docs/decisions/0016-webcheck-crate.md.

mod browser;
mod site;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::Path;

use talos_core::contract::WebRequest;
use talos_core::turn::web::{Interaction, WebFinding, WebReport};
use talos_webcheck::InteractionStatus;

pub use site::{reconciled, site_files};

/// Where a headless browser would be.
const CHROMIUM: &str = "/usr/bin/chromium";

/// The facts the pure checks read, from the contract's web facts.
pub fn request(web: &WebRequest) -> talos_webcheck::Request {
    talos_webcheck::Request {
        asks_for_behaviour: web.asks_for_behaviour,
        mentions_todo: web.mentions_todo,
        interaction: web
            .interaction
            .as_ref()
            .map(|named| talos_webcheck::Interaction {
                trigger: named.trigger.clone(),
                target: named.target.clone(),
            }),
    }
}

/// Check the web files of a workspace against the request, running a named interaction in
/// the headless browser when one is installed.
///
/// `files`: workspace-relative path -> content of the web files to check (see
/// [`site_files`]); `request`: the facts of the person's request (see [`request`]).
pub fn check(files: &BTreeMap<String, String>, request: &talos_webcheck::Request) -> WebReport {
    let report = talos_webcheck::check(files, request);
    let interaction = match report.interaction {
        InteractionStatus::NotRequested => Interaction::NotRequested,
        InteractionStatus::Failed(why) => Interaction::Failed(why),
        InteractionStatus::NeedsBrowser(run) => {
            let browser = Path::new(CHROMIUM);
            if !browser.exists() {
                Interaction::NotRun("no headless browser installed".to_string())
            } else if let Some(page) = &run.page {
                browser::run(browser, files, page, &run.trigger, &run.target)
            } else {
                Interaction::NotRun("no page to load in the browser".to_string())
            }
        }
    };
    // The core's report is the one shape: the turn records it and the trace carries it.
    WebReport {
        checked: report.checked.len(),
        findings: report
            .findings
            .into_iter()
            .map(|f| WebFinding {
                file: f.file,
                code: f.code.to_string(),
                message: f.message,
            })
            .collect(),
        interaction,
    }
}
