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
use talos_webcheck::InteractionStatus;

pub use site::{reconciled, site_files};
pub use talos_webcheck::Finding;

/// What the verifier checked and found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebReport {
    /// Files examined.
    pub checked: Vec<String>,
    /// Problems found.
    pub findings: Vec<Finding>,
    /// The state of the interaction the request names, if any.
    pub interaction: InteractionCheck,
}

/// The state of an interaction named in the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InteractionCheck {
    /// The request names no interaction.
    NotRequested,
    /// Named but not run; the reason (e.g. "no headless browser installed").
    NotRun(String),
    /// Run in a browser and passed.
    Passed,
    /// Failed; why (statically: a named element exists in no page).
    Failed(String),
}

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
        InteractionStatus::NotRequested => InteractionCheck::NotRequested,
        InteractionStatus::Failed(why) => InteractionCheck::Failed(why),
        InteractionStatus::NeedsBrowser(run) => {
            let browser = Path::new(CHROMIUM);
            if !browser.exists() {
                InteractionCheck::NotRun("no headless browser installed".to_string())
            } else if let Some(page) = &run.page {
                browser::run(browser, files, page, &run.trigger, &run.target)
            } else {
                InteractionCheck::NotRun("no page to load in the browser".to_string())
            }
        }
    };
    WebReport {
        checked: report.checked,
        findings: report.findings,
        interaction,
    }
}
