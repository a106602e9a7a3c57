//! `talos generate completions|man` and `talosd --generate-man`: the release's completion
//! scripts and man pages come from the clap definitions, name every visible subcommand and
//! never the hidden `generate`, render with a one-line NAME and the sections a reader looks
//! for, carry `SOURCE_DATE_EPOCH`'s date (two runs give the same bytes), pass `mandoc -T lint`
//! and groff without a warning, and a shell Talos does not know is a usage error.

use std::path::Path;
use std::process::{Command, Output};

const TALOSD: &str = env!("CARGO_BIN_EXE_e2e-talosd");
const TALOS: &str = env!("CARGO_BIN_EXE_e2e-talos");

/// The release's time for these tests: 2026-12-01.
const EPOCH: &str = "1796156659";

fn talos(args: &[&str]) -> Output {
    Command::new(TALOS)
        .args(args)
        .env("NO_COLOR", "1")
        .env("SOURCE_DATE_EPOCH", EPOCH)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The top-level subcommands, from the man pages `talos generate man` writes (`talos-X.1`
/// with no further dash), sorted.
fn top_level_pages(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|name| {
            let sub = name.strip_prefix("talos-")?.strip_suffix(".1")?;
            (!sub.contains('-')).then(|| sub.to_owned())
        })
        .collect();
    names.sort();
    names
}

fn generate_man(dir: &Path) {
    let out = talos(&["generate", "man", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn completions_name_every_subcommand_for_each_shell() {
    let man = tempfile::tempdir().unwrap();
    generate_man(man.path());
    let subcommands = top_level_pages(man.path());
    for expected in ["run", "doctor", "config", "trace", "acp", "search"] {
        assert!(subcommands.iter().any(|s| s == expected), "{subcommands:?}");
    }
    assert!(
        !subcommands.iter().any(|s| s == "generate"),
        "generate is hidden"
    );
    for (shell, marker) in [
        ("bash", "complete -F _talos"),
        ("zsh", "#compdef talos"),
        ("fish", "complete -c talos"),
    ] {
        let out = talos(&["generate", "completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", text(&out.stderr));
        let script = text(&out.stdout);
        assert!(script.contains(marker), "{shell}: no `{marker}`");
        assert!(
            !script.contains("generate"),
            "{shell}: the hidden generate is offered"
        );
        for sub in &subcommands {
            assert!(script.contains(sub.as_str()), "{shell}: `{sub}` missing");
        }
    }
    // The bash script's top-level word list, exactly.
    let bash = text(&talos(&["generate", "completions", "bash"]).stdout);
    let top = bash
        .lines()
        .skip_while(|line| !line.trim_start().starts_with("talos)"))
        .find_map(|line| line.trim().strip_prefix("opts=\""))
        .unwrap();
    for sub in &subcommands {
        assert!(
            top.split_whitespace().any(|w| w == sub),
            "`{sub}` not in {top}"
        );
    }
}

#[test]
fn man_pages_render_with_the_release_date_the_same_bytes_twice_and_no_lint_warning() {
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    generate_man(first.path());
    generate_man(second.path());
    for dir in [first.path(), second.path()] {
        let out = Command::new(TALOSD)
            .arg("--generate-man")
            .arg(dir)
            .env("SOURCE_DATE_EPOCH", EPOCH)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    let mut pages: Vec<_> = std::fs::read_dir(first.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    pages.sort();
    assert!(pages.len() > 10, "{pages:?}");
    for page in &pages {
        let a = std::fs::read(first.path().join(page)).unwrap();
        let b = std::fs::read(second.path().join(page)).unwrap();
        assert_eq!(a, b, "{page:?} differs between two runs");
    }
    for (page, title, name) in [
        (
            "talos.1",
            ".TH TALOS 1 2026-12-01 \"talos ",
            "talos \\- Talos: a local coding assistant",
        ),
        (
            "talos-run.1",
            ".TH TALOS-RUN 1 2026-12-01 \"talos ",
            "talos\\-run \\- run one request in a workspace",
        ),
        (
            "talosd.1",
            ".TH TALOSD 1 2026-12-01 \"talosd ",
            "talosd \\- the Talos daemon: sessions, policy, model engine, checkpoints and traces",
        ),
    ] {
        let roff = std::fs::read_to_string(first.path().join(page)).unwrap();
        let th = roff.lines().find(|l| l.starts_with(".TH ")).unwrap();
        assert!(th.starts_with(title), "{page}: {th}");
        assert!(th.ends_with("\"Talos Manual\""), "{page}: {th}");
        assert!(
            roff.contains(&format!("\n.SH NAME\n{name}\n.SH SYNOPSIS\n")),
            "{page}: one NAME line:\n{roff}"
        );
        for section in ["EXIT STATUS", "ENVIRONMENT", "FILES", "SEE ALSO"] {
            assert!(
                roff.contains(&format!("\n.SH {section}\n")),
                "{page}: no {section}"
            );
        }
        // Rendered by man when it is installed (CI installs man-db for the release check).
        let Ok(out) = Command::new("man")
            .arg("-l")
            .arg(first.path().join(page))
            .env("MANWIDTH", "80")
            .output()
        else {
            eprintln!("man is not installed: checked the roff headers only");
            continue;
        };
        assert!(out.status.success(), "man -l {page}: {}", text(&out.stderr));
        // man justifies the lines, so words may be two spaces apart.
        let shown = text(&out.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let name = page.trim_end_matches(".1");
        assert!(shown.contains(&format!("NAME {name} - ")), "{shown}");
    }
    lint_clean(first.path(), &pages);
}

/// Every page passes `mandoc -T lint` at the warning level and `groff -ww` with nothing to say,
/// when they are installed (CI installs both; without them it says so).
fn lint_clean(dir: &Path, pages: &[std::ffi::OsString]) {
    let paths: Vec<_> = pages.iter().map(|p| dir.join(p)).collect();
    match Command::new("mandoc")
        .args(["-T", "lint", "-W", "warning"])
        .args(&paths)
        .output()
    {
        Ok(out) => {
            let report = format!("{}{}", text(&out.stdout), text(&out.stderr));
            assert!(report.trim().is_empty(), "mandoc -T lint: {report}");
        }
        Err(_) => eprintln!("mandoc is not installed: the pages were not linted"),
    }
    for path in &paths {
        let Ok(out) = Command::new("groff")
            .args(["-man", "-ww", "-z"])
            .arg(path)
            .output()
        else {
            eprintln!("groff is not installed: the pages were not checked with it");
            return;
        };
        assert!(
            out.stderr.is_empty(),
            "groff {}: {}",
            path.display(),
            text(&out.stderr)
        );
    }
}

#[test]
fn an_unknown_shell_is_a_usage_error_naming_the_shells() {
    let out = talos(&["generate", "completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    assert!(err.contains("invalid value 'tcsh'"), "{err}");
    assert!(err.contains("bash, zsh, fish"), "{err}");
}

#[test]
fn generate_is_hidden_from_help() {
    let out = talos(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = text(&out.stdout);
    assert!(
        help.contains("doctor") && !help.contains("generate"),
        "{help}"
    );
}
