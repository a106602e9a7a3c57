//! The sections every `talos` man page has besides clap's: EXIT STATUS, ENVIRONMENT, FILES and
//! SEE ALSO, as roff. The paths are the ones `talosd` and `talos` use (docs/configuration.md),
//! and the documentation's place is where the .deb installs it.

use talos_protocol::manpage::Section;

/// The sections of the page `name` (`talos`, `talos-run`, ...).
pub fn for_page(name: &str) -> Vec<Section> {
    let see_also = if name == "talos" {
        "\\fBtalosd\\fR(1), \\fBtalos\\-run\\fR(1), \\fBtalos\\-acp\\fR(1), \
         \\fBtalos\\-doctor\\fR(1), \\fBsystemctl\\fR(1)"
    } else {
        "\\fBtalos\\fR(1), \\fBtalosd\\fR(1)"
    };
    vec![
        section("EXIT STATUS", EXIT_STATUS),
        section("ENVIRONMENT", ENVIRONMENT),
        section("FILES", FILES),
        section(
            "SEE ALSO",
            &format!(
                "{see_also}\n.PP\nThe README and the guides in \\fI/usr/share/doc/talos/\\fR \
                 (\\fIdocs/\\fR beside README.md in the release tarball)."
            ),
        ),
    ]
}

fn section(heading: &str, body: &str) -> Section {
    Section::new(heading, body)
}

const EXIT_STATUS: &str = "\
.TP
0
Success; also when stdout was closed by its reader, for \\fBtalos stop\\fR when no daemon \
runs, and for \\fBtalos status \\-\\-json\\fR, which then prints {\"running\":false}.
.TP
1
A turn that did not complete (partial, blocked, advisory only, failed or cancelled), or a \
configuration that is not valid (\\fBtalos config check\\fR).
.TP
2
A usage error, or the daemon could not be reached.
.TP
3
The socket, its directory or the process behind it is not the user's own: nothing was sent.";

const ENVIRONMENT: &str = "\
.TP
TALOS_HOME
Keep everything (config.yaml, state, logs, index, the socket in run/) under this folder.
.TP
TALOS_DAEMON
The talosd program to start when no daemon runs (default: talosd beside talos, else on PATH).
.TP
TALOS_HISTORY
The interactive session's history file.
.TP
TALOS_LLAMA_HOME
Where get\\-llama.sh installs llama\\-server and the default model.
.TP
TALOS_LOG
The daemon's log filter (default info).
.TP
XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_STATE_HOME, XDG_CACHE_HOME, XDG_RUNTIME_DIR
The base directories of FILES below.
.TP
NO_COLOR
When set and not empty, no colour.
.TP
TERM
No colour and no live progress line when it is dumb.";

const FILES: &str = "\
.TP
$XDG_CONFIG_HOME/talos/config.yaml
The configuration (\\fBtalos config path\\fR prints it; default ~/.config).
.TP
$XDG_DATA_HOME/talos/
Traces, checkpoints and sessions (default ~/.local/share).
.TP
$XDG_STATE_HOME/talos/
The daemon's and llama\\-server's logs in logs/, and the interactive history (default \
~/.local/state).
.TP
$XDG_CACHE_HOME/talos/index/
The workspace search indexes, rebuilt when missing (default ~/.cache).
.TP
$XDG_RUNTIME_DIR/talos/talosd.sock
The daemon's socket.
.TP
/usr/lib/systemd/user/talosd.socket, talosd.service
The systemd user units (\\fBsystemctl \\-\\-user enable \\-\\-now talosd.socket\\fR).
.TP
/usr/share/talos/get\\-llama.sh
Builds llama\\-server and installs the default model.
.TP
/usr/share/doc/talos/
README.md, docs/ and the protocol's JSON Schema in protocol/schema/.";
