//! The daemon control commands: `talos status` (what the daemon reports about itself) and
//! `talos stop` (ask it to shut down). Neither starts a daemon.

use std::time::Duration;

use talos_protocol::{
    DAEMON_SHUTDOWN, DAEMON_STATUS, DaemonStatusResult, MODEL_STATUS, ModelStatusResult,
};

use crate::client::{Client, ignore_messages};
use crate::failure::Failure;
use crate::render::{Output, printable};

/// How long `talos stop` waits for the daemon to hang up after agreeing to stop.
const STOP_WAIT: Duration = Duration::from_secs(5);

/// What `talos status --json` prints when no daemon answers.
pub const NOT_RUNNING_JSON: &str = r#"{"running":false}"#;

/// `talos status`: the daemon's status, readable or as one JSON line (`running` set to true
/// beside the daemon's own fields).
pub fn status(client: &mut Client, json: bool, output: &Output) -> Result<(), Failure> {
    client.initialize()?;
    let mut raw = client.call(DAEMON_STATUS, serde_json::json!({}), &mut ignore_messages)?;
    if json {
        if let Some(fields) = raw.as_object_mut() {
            fields.insert("running".into(), serde_json::Value::Bool(true));
        }
        return output.out(&format!("{raw}\n"));
    }
    let status: DaemonStatusResult = serde_json::from_value(raw)
        .map_err(|error| Failure::Connection(format!("invalid daemon/status result: {error}")))?;
    output.out(&describe_status(&status))
}

/// `talos model status`: the model server as the daemon sees it.
pub fn model_status(client: &mut Client, json: bool, output: &Output) -> Result<(), Failure> {
    client.initialize()?;
    let raw = client.call(MODEL_STATUS, serde_json::json!({}), &mut ignore_messages)?;
    if json {
        return output.out(&format!("{raw}\n"));
    }
    let status: ModelStatusResult = serde_json::from_value(raw)
        .map_err(|error| Failure::Connection(format!("invalid model/status result: {error}")))?;
    let mut text = describe_model(&status);
    if status.models.len() > 1 {
        text.push_str("models (* the default; `talos run --model NAME`, `/model NAME`):\n");
        for m in &status.models {
            text.push_str(&printable(&format!(
                "{} {:<12} {:<12} {:<9} {}\n",
                if m.default { "*" } else { " " },
                m.name,
                m.mode,
                m.state,
                m.url
            )));
        }
    }
    output.out(&text)
}

/// One model's status as aligned `name: value` lines.
fn describe_model(status: &ModelStatusResult) -> String {
    let mut rows = vec![
        ("name", status.name.clone()),
        ("mode", status.mode.clone()),
        ("state", status.state.clone()),
        ("url", status.url.clone()),
    ];
    if let Some(pid) = status.pid {
        rows.push(("pid", pid.to_string()));
    }
    if let Some(model) = &status.model {
        rows.push(("model", model.clone()));
    }
    if status.mode == "managed" {
        rows.push((
            "owned",
            if status.owned {
                "yes (listener proven to be the server Talos started)".into()
            } else {
                "no".into()
            },
        ));
        rows.push(("restarts", status.restarts.to_string()));
    }
    if let Some(error) = &status.last_error {
        rows.push(("last error", error.clone()));
    }
    let width = rows.iter().map(|(name, _)| name.len()).max().unwrap_or(0) + 1;
    rows.iter()
        .map(|(name, value)| format!("{:<width$} {}\n", format!("{name}:"), printable(value)))
        .collect()
}

/// `talos stop`: asks the daemon to shut down and waits briefly for it to hang up.
pub fn stop(client: &mut Client, output: &Output) -> Result<(), Failure> {
    client.initialize()?;
    client.call(DAEMON_SHUTDOWN, serde_json::json!({}), &mut ignore_messages)?;
    output.out("talosd stopping\n")?;
    client.wait_for_close(STOP_WAIT);
    Ok(())
}

/// The status as aligned `name: value` lines.
pub fn describe_status(status: &DaemonStatusResult) -> String {
    let mut rows = vec![
        ("version", status.version.clone()),
        ("pid", status.pid.to_string()),
        ("uptime", format_uptime(status.uptime_ms)),
        ("socket", status.socket.clone()),
        ("home", status.home.clone()),
        ("sessions", status.sessions.to_string()),
        ("active turns", status.active_turns.to_string()),
        (
            "model",
            format!("{} {}", status.model.mode, status.model.url),
        ),
    ];
    if let Some(error) = &status.config_error {
        rows.push(("config error", error.clone()));
    }
    let width = rows.iter().map(|(name, _)| name.len()).max().unwrap_or(0) + 1;
    rows.iter()
        .map(|(name, value)| format!("{:<width$} {}\n", format!("{name}:"), printable(value)))
        .collect()
}

/// `45s`, `3m 05s`, `2h 03m 05s`, `1d 02h 03m`.
pub fn format_uptime(uptime_ms: u64) -> String {
    let seconds = uptime_ms / 1000;
    let (days, hours, minutes, seconds) = (
        seconds / 86_400,
        seconds / 3600 % 24,
        seconds / 60 % 60,
        seconds % 60,
    );
    if days > 0 {
        format!("{days}d {hours:02}h {minutes:02}m")
    } else if hours > 0 {
        format!("{hours}h {minutes:02}m {seconds:02}s")
    } else if minutes > 0 {
        format!("{minutes}m {seconds:02}s")
    } else {
        format!("{seconds}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn uptime_is_short_and_readable() {
        for (ms, expected) in [
            (0, "0s"),
            (45_999, "45s"),
            (185_000, "3m 05s"),
            (7_385_000, "2h 03m 05s"),
            (93_780_000, "1d 02h 03m"),
        ] {
            assert_eq!(format_uptime(ms), expected, "{ms}");
        }
    }

    #[test]
    fn status_lists_every_field_and_the_config_error_only_when_present() {
        let mut status: DaemonStatusResult = serde_json::from_value(json!({
            "version": "0.1.0", "pid": 42, "uptimeMs": 5000, "socket": "/r/talosd.sock",
            "home": "/h", "sessions": 2, "activeTurns": 1,
            "model": {"mode": "connect_only", "url": "http://127.0.0.1:8080"}
        }))
        .unwrap();
        let expected = "version:      0.1.0\npid:          42\nuptime:       5s\n\
                        socket:       /r/talosd.sock\nhome:         /h\nsessions:     2\n\
                        active turns: 1\nmodel:        connect_only http://127.0.0.1:8080\n";
        assert_eq!(describe_status(&status), expected);
        status.config_error = Some("bad yaml".into());
        assert!(describe_status(&status).ends_with("config error: bad yaml\n"));
    }
}
