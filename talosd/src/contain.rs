//! Optional containment for profile commands (Linux): a fresh network namespace through
//! util-linux `unshare`, and Landlock confining writes to the workspace, a temp dir and `/dev`,
//! applied by `talosd --contain-exec` to itself before it execs the command. What the kernel
//! grants is probed, not assumed; a profile that asks for containment the kernel cannot give
//! is reported as uncontained, never as contained.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use talos_core::command::Isolation;

use crate::runner::{self, ProbeOutput};

/// The hidden first argument that turns `talosd` into the containment shim.
pub const SHIM_FLAG: &str = "--contain-exec";
/// The shim's exit code when Landlock could not be fully enforced.
pub const NOT_ENFORCED_EXIT: i32 = 97;

/// What this machine can enforce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Support {
    /// The argv prefix that runs a command in a new network namespace, when one works.
    pub network_prefix: Option<Vec<String>>,
    /// Whether Landlock write confinement is fully enforced.
    pub landlock: bool,
}

static SHIM: OnceLock<PathBuf> = OnceLock::new();

/// Sets the program that acts as the containment shim (a `talosd` binary). By default it is
/// this process's own executable; an in-process daemon (tests) names a real `talosd`. Takes
/// effect only before the first probe.
pub fn use_shim(path: PathBuf) {
    let _ = SHIM.set(path);
}

fn shim() -> Option<PathBuf> {
    SHIM.get().cloned().or_else(|| std::env::current_exe().ok())
}

/// Probed once per daemon.
pub fn support() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(probe)
}

fn probe() -> Support {
    let ok = |argv: &[&str]| {
        let args: Vec<String> = argv[1..].iter().map(|a| (*a).to_string()).collect();
        runner::probe_succeeds(Path::new(argv[0]), &args, ProbeOutput::Discard)
    };
    let network_prefix = [
        vec!["unshare", "--net", "--"],
        vec!["unshare", "--user", "--map-root-user", "--net", "--"],
    ]
    .into_iter()
    .find(|prefix| ok(&[prefix.as_slice(), &["true"]].concat()))
    .map(|p| p.into_iter().map(str::to_string).collect());
    let landlock = shim().is_some_and(|exe| {
        let tmp = std::env::temp_dir().display().to_string();
        let args = [SHIM_FLAG, "--allow-write", &tmp, "--", "true"].map(str::to_string);
        runner::probe_succeeds(&exe, &args, ProbeOutput::Inherit)
    });
    tracing::info!(
        network = network_prefix.is_some(),
        landlock,
        "containment probe"
    );
    Support {
        network_prefix,
        landlock,
    }
}

/// A command line wrapped for the containment it can get, and what was granted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wrapped {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub network_isolated: bool,
    pub writes_confined: bool,
}

/// `program args` wrapped for as much of the `wanted` isolation as this machine grants (a plan's
/// request, `talos_core::command::Isolation`); `Wrapped` says what was granted.
pub fn wrap(program: &Path, args: &[String], wanted: Isolation, workspace: &Path) -> Wrapped {
    let support = support();
    let mut argv: Vec<String> = vec![program.display().to_string()];
    argv.extend(args.iter().cloned());
    let writes_confined = wanted.writes && support.landlock;
    if writes_confined && let Some(exe) = shim() {
        let mut shim = vec![
            exe.display().to_string(),
            SHIM_FLAG.into(),
            "--allow-write".into(),
            workspace.display().to_string(),
            "--allow-write".into(),
            std::env::temp_dir().display().to_string(),
            "--".into(),
        ];
        shim.extend(argv);
        argv = shim;
    }
    let network_isolated = wanted.network && support.network_prefix.is_some();
    if network_isolated && let Some(prefix) = &support.network_prefix {
        let mut wrapped = prefix.clone();
        wrapped.extend(argv);
        argv = wrapped;
    }
    let program = PathBuf::from(argv.remove(0));
    Wrapped {
        program,
        args: argv,
        network_isolated,
        writes_confined,
    }
}

/// The shim: `talosd --contain-exec --allow-write DIR ... -- PROGRAM ARGS...`. Confines writes
/// with Landlock, then replaces itself with the program. Never returns on success.
pub fn shim_main(args: &[String]) -> i32 {
    let Some(split) = args.iter().position(|a| a == "--") else {
        eprintln!("talosd {SHIM_FLAG}: missing -- before the program");
        return 2;
    };
    let mut allowed: Vec<PathBuf> = vec![PathBuf::from("/dev")];
    let mut i = 0;
    while i < split {
        if args[i] == "--allow-write" && i + 1 < split {
            allowed.push(PathBuf::from(&args[i + 1]));
            i += 2;
        } else {
            i += 1;
        }
    }
    let Some((program, rest)) = args[split + 1..].split_first() else {
        eprintln!("talosd {SHIM_FLAG}: no program");
        return 2;
    };
    if let Err(message) = confine_writes(&allowed) {
        eprintln!("talosd {SHIM_FLAG}: writes not confined: {message}");
        return NOT_ENFORCED_EXIT;
    }
    let error = runner::exec_replacing(program, rest);
    eprintln!("talosd {SHIM_FLAG}: cannot run {program}: {error}");
    127
}

/// Why the shim could not confine writes (the run is then refused as not enforced).
#[derive(Debug, thiserror::Error)]
enum ConfineError {
    /// Landlock's own message for the ruleset it could not build or apply.
    #[error("{0}")]
    Ruleset(String),
    #[error("the kernel enforced Landlock only partially")]
    Partial,
    #[error("the kernel does not enforce Landlock")]
    NotEnforced,
    #[cfg_attr(target_os = "linux", allow(dead_code))]
    #[error("Landlock exists only on Linux")]
    NotLinux,
}

#[cfg(target_os = "linux")]
fn confine_writes(allowed: &[PathBuf]) -> Result<(), ConfineError> {
    use landlock::{
        ABI, AccessFs, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, path_beneath_rules,
    };
    let abi = ABI::V3;
    let status = Ruleset::default()
        .handle_access(AccessFs::from_write(abi))
        .and_then(|r| r.create())
        .and_then(|r| r.add_rules(path_beneath_rules(allowed, AccessFs::from_write(abi))))
        .and_then(|r| r.restrict_self())
        .map_err(|e| ConfineError::Ruleset(e.to_string()))?;
    match status.ruleset {
        RulesetStatus::FullyEnforced => Ok(()),
        RulesetStatus::PartiallyEnforced => Err(ConfineError::Partial),
        RulesetStatus::NotEnforced => Err(ConfineError::NotEnforced),
    }
}

#[cfg(not(target_os = "linux"))]
fn confine_writes(_allowed: &[PathBuf]) -> Result<(), ConfineError> {
    Err(ConfineError::NotLinux)
}
