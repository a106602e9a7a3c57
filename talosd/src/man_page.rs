//! `talosd --generate-man DIR`: the daemon's page, talosd.1, from its clap definitions, finished
//! as every Talos page is (`talos_protocol::manpage`): a one-line NAME, the release's date from
//! `SOURCE_DATE_EPOCH`, and EXIT STATUS, ENVIRONMENT, FILES and SEE ALSO.

use talos_protocol::manpage::{self, Section};

/// The finished roff of talosd.1 for the command `command` (talosd's `Args`).
pub fn render(
    command: clap::Command,
    source_date_epoch: Option<&str>,
    now: i64,
) -> std::io::Result<String> {
    let about = command
        .get_about()
        .map(ToString::to_string)
        .unwrap_or_default();
    let mut bytes = Vec::new();
    clap_mangen::Man::new(command)
        .title("TALOSD")
        .manual("Talos Manual")
        .date(manpage::page_date(source_date_epoch, now))
        .render(&mut bytes)?;
    Ok(manpage::finish(
        &String::from_utf8_lossy(&bytes),
        "talosd",
        &manpage::summary(&about),
        &sections(),
    ))
}

fn sections() -> Vec<Section> {
    let section = Section::new;
    vec![
        section("EXIT STATUS", EXIT_STATUS),
        section("ENVIRONMENT", ENVIRONMENT),
        section("FILES", FILES),
        section(
            "SEE ALSO",
            "\\fBtalos\\fR(1), \\fBtalos\\-doctor\\fR(1), \\fBsystemd.socket\\fR(5)\n.PP\n\
             The README and the guides in \\fI/usr/share/doc/talos/\\fR.",
        ),
    ]
}

const EXIT_STATUS: &str = "\
.TP
0
The daemon stopped as asked, the detached copy is serving, or one of the checks and \
generators (\\-\\-config\\-path, \\-\\-doctor, \\-\\-check\\-config with a valid file) ran.
.TP
1
It could not start or serve (the socket, the home or the runtime), or \\-\\-check\\-config \
found the configuration not valid.
.TP
2
A usage error.";

const ENVIRONMENT: &str = "\
.TP
TALOS_HOME
Keep everything (config.yaml, state, logs, index, the socket in run/) under this folder.
.TP
TALOS_LOG
The log filter (default info), in tracing's env\\-filter form.
.TP
TALOS_LLAMA_HOME
Where llama\\-server and the default model are found (see get\\-llama.sh).
.TP
XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_STATE_HOME, XDG_CACHE_HOME, XDG_RUNTIME_DIR
The base directories of FILES below.
.TP
LISTEN_FDS, LISTEN_PID, NOTIFY_SOCKET
systemd's socket activation and readiness notification (talosd.socket).";

const FILES: &str = "\
.TP
$XDG_CONFIG_HOME/talos/config.yaml
The configuration (default ~/.config).
.TP
$XDG_DATA_HOME/talos/
Traces, checkpoints, sessions and pending writes (default ~/.local/share).
.TP
$XDG_STATE_HOME/talos/logs/
talosd.log when detached, and llama\\-server's log (default ~/.local/state); moved once from \
the data folder's logs/.
.TP
$XDG_CACHE_HOME/talos/index/
The workspace search indexes, rebuilt when missing (default ~/.cache); moved once from the \
data folder's index/.
.TP
$XDG_RUNTIME_DIR/talos/talosd.sock
The socket (0600, in a 0700 folder).
.TP
/usr/lib/systemd/user/talosd.socket, talosd.service
The systemd user units.";
