//! `talos profiles`: the command profiles of a workspace and their trust state, and
//! `talos profiles trust`, which shows the declaration and its hash and pins it only on an
//! explicit yes (a non-interactive standard input needs `--yes`).

use std::io::{BufRead, IsTerminal};

use talos_protocol::{
    PROFILE_LIST, PROFILE_TRUST, ProfileInfo, ProfileListParams, ProfileListResult,
    ProfileTrustParams, ProfileTrustResult,
};

use crate::client::{Client, ignore_messages, params};
use crate::failure::Failure;
use crate::render::{Output, printable};

fn list(client: &mut Client, workspace: &str) -> Result<ProfileListResult, Failure> {
    let raw = client.call(
        PROFILE_LIST,
        params(serde_json::to_value(ProfileListParams {
            workspace: workspace.to_string(),
        })),
        &mut ignore_messages,
    )?;
    serde_json::from_value(raw)
        .map_err(|e| Failure::Connection(format!("invalid {PROFILE_LIST} result: {e}")))
}

fn line(p: &ProfileInfo) -> String {
    let isolate = if p.isolate.is_empty() {
        String::new()
    } else {
        format!("  isolate: {}", p.isolate.join(", "))
    };
    format!(
        "  {}: {}  (timeout {}s){isolate}\n",
        p.id,
        printable(&p.argv.join(" ")),
        p.timeout_ms / 1000
    )
}

/// `talos profiles`.
pub fn show(
    client: &mut Client,
    workspace: &str,
    json: bool,
    output: &Output,
) -> Result<(), Failure> {
    client.initialize()?;
    let result = list(client, workspace)?;
    if json {
        let value =
            serde_json::to_value(&result).map_err(|e| Failure::Connection(e.to_string()))?;
        return output.out(&format!("{value}\n"));
    }
    let mut text = String::from("Built-in profiles:\n");
    for p in &result.builtin {
        text.push_str(&line(p));
    }
    let w = &result.workspace;
    text.push_str(&format!(
        "Workspace profiles (.talos/profiles.yaml): {}\n",
        state_label(&w.state, w.reason.as_deref())
    ));
    if let Some(sha) = &w.sha256 {
        text.push_str(&format!("  sha256: {sha}\n"));
    }
    for p in &w.profiles {
        text.push_str(&line(p));
    }
    if w.state == "untrusted_new" || w.state == "untrusted_changed" {
        text.push_str("  review and pin with: talos profiles trust\n");
    }
    output.out(&text)
}

fn state_label(state: &str, reason: Option<&str>) -> String {
    match state {
        "none_declared" => "none declared".into(),
        "invalid" => format!("invalid - {}", reason.unwrap_or("unknown reason")),
        "untrusted_new" => "declared, untrusted (never pinned)".into(),
        "untrusted_changed" => "declared, untrusted (file changed since the last pin)".into(),
        "trusted" => "trusted".into(),
        other => other.to_string(),
    }
}

/// `talos profiles trust`.
pub fn trust(
    client: &mut Client,
    workspace: &str,
    yes: bool,
    output: &Output,
) -> Result<(), Failure> {
    client.initialize()?;
    let result = list(client, workspace)?;
    let w = result.workspace;
    let sha =
        match (w.state.as_str(), &w.sha256) {
            ("none_declared", _) => return output.out(
                "No workspace profiles are declared (.talos/profiles.yaml). Nothing to trust.\n",
            ),
            ("invalid", _) => {
                return Err(Failure::Usage(format!(
                    "the declaration is invalid and cannot be trusted: {}",
                    w.reason.unwrap_or_default()
                )));
            }
            ("trusted", Some(sha)) => {
                return output.out(&format!(
                    "Workspace profiles are already trusted (sha256 {sha}). Nothing changed.\n"
                ));
            }
            (_, Some(sha)) => sha.clone(),
            (_, None) => {
                return Err(Failure::Connection(
                    "the daemon reported no hash for the declaration".into(),
                ));
            }
        };
    output.err_line(&format!("--- .talos/profiles.yaml (sha256 {sha})"));
    for l in w.declaration.unwrap_or_default().lines() {
        output.err_line(&format!("  {}", printable(l)));
    }
    output.err_line("---");
    if !yes {
        if !std::io::stdin().is_terminal() {
            return Err(Failure::Usage("refusing to pin profiles without a terminal to ask on; review the file and pass --yes".into()));
        }
        output.err_line("These profiles will be able to run with your permissions when you approve a command. Pin this exact file? [y/N]");
        let mut answer = String::new();
        let _ = std::io::stdin().lock().read_line(&mut answer);
        if !matches!(answer.trim().to_lowercase().as_str(), "y" | "yes") {
            return output.out("Workspace profiles were NOT trusted. Nothing changed.\n");
        }
    }
    let raw = client.call(
        PROFILE_TRUST,
        params(serde_json::to_value(ProfileTrustParams {
            workspace: workspace.to_string(),
            sha256: sha.clone(),
        })),
        &mut ignore_messages,
    )?;
    let pinned: ProfileTrustResult = serde_json::from_value(raw)
        .map_err(|e| Failure::Connection(format!("invalid {PROFILE_TRUST} result: {e}")))?;
    if pinned.pinned {
        output.out(&format!(
            "Pinned {} workspace profile(s) (sha256 {}).\n",
            pinned.profile_count, pinned.sha256
        ))
    } else {
        Err(Failure::Usage(
            "the declaration changed while you reviewed it; nothing was pinned".into(),
        ))
    }
}
