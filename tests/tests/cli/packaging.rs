//! What the Debian package and the tarball promise (issue 29, items 1, 2 and 5), checked on the
//! committed sources so it cannot drift between releases: the machine-readable copyright holds
//! the MIT text word for word and Apache's notice; the Debian changelog's newest entry is the workspace's
//! version; every link in the shipped Markdown resolves inside what ships (README.md, docs/,
//! protocol/schema/); the .deb suggests what get-llama.sh needs; and get-llama.sh, missing
//! them, names their Debian packages and stops before it downloads anything.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .canonicalize()
        .unwrap()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A DEP-5 field's continuation lines back as the text they hold (` .` is a blank line).
fn unfolded(copyright: &str, license: &str) -> String {
    let start = format!("License: {license}\n");
    let at = copyright
        .find(&start)
        .unwrap_or_else(|| panic!("no {start:?}"));
    copyright[at + start.len()..]
        .lines()
        .take_while(|line| line.starts_with(' '))
        .map(|line| if line == " ." { "" } else { &line[1..] })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Proves debian/copyright is machine-readable and carries the notice, the MIT text exactly as
/// LICENSE-MIT has it, and Apache's licence notice pointing to Debian's copy of its text.
#[test]
fn the_copyright_file_holds_both_licences_and_the_notice() {
    let copyright = read("packaging/debian/copyright");
    assert!(copyright.starts_with(
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
    ));
    assert!(copyright.contains(
        "\nFiles: *\nCopyright: 2026 The Talos developers\nLicense: MIT or Apache-2.0\n"
    ));
    let trimmed = |text: String| {
        text.lines()
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        unfolded(&copyright, "MIT"),
        trimmed(read("LICENSE-MIT")).trim_end()
    );
    // Apache's full text is Debian's own copy (lintian refuses another); the notice is here.
    let apache = unfolded(&copyright, "Apache-2.0");
    assert!(apache.contains("/usr/share/common-licenses/Apache-2.0"));
    assert!(apache.starts_with("Licensed under the Apache License, Version 2.0"));
    assert!(read("LICENSE-APACHE").contains("Version 2.0, January 2004"));
}

/// Proves the changelog's newest entry is this version's Debian revision 1, in Debian's form.
#[test]
fn the_debian_changelog_names_the_workspace_version() {
    let manifest = read("Cargo.toml");
    let version = manifest
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .unwrap();
    let changelog = read("packaging/debian/changelog");
    let first = changelog.lines().next().unwrap();
    assert_eq!(
        first,
        format!("talos ({version}-1) unstable; urgency=medium")
    );
    let trailer = changelog.lines().find(|l| l.starts_with(" -- ")).unwrap();
    assert!(trailer.contains("<talos@example.invalid>  "), "{trailer}");
}

/// Proves every relative link and every `docs/...` path named in the shipped Markdown
/// resolves inside the shipped tree (README.md beside docs/ and protocol/schema/), as it is
/// laid out in /usr/share/doc/talos and the tarball.
#[test]
fn every_pointer_in_the_shipped_documentation_resolves_where_it_is_installed() {
    let root = root();
    let shipped = |path: &Path| {
        let rel = path.strip_prefix(&root).unwrap_or(path);
        rel == Path::new("README.md")
            || rel.starts_with("docs")
            || rel.starts_with("protocol/schema")
    };
    let mut pages = vec![root.join("README.md")];
    let mut stack = vec![root.join("docs")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    let mut broken = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        let dir = page.parent().unwrap();
        for target in markdown_links(&text) {
            let resolved = normalise(&dir.join(&target));
            if !(resolved.exists() && shipped(&resolved)) {
                broken.push(format!(
                    "{}: {target}",
                    page.strip_prefix(&root).unwrap().display()
                ));
            }
        }
    }
    let readme = read("README.md");
    for named in readme
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| w.starts_with("docs/"))
    {
        if !root.join(named.trim_end_matches('/')).exists() {
            broken.push(format!("README.md: `{named}`"));
        }
    }
    assert!(pages.len() > 20, "{pages:?}");
    assert!(
        broken.is_empty(),
        "pointers that do not resolve where installed: {broken:#?}"
    );
}

/// The relative targets of Markdown links `](target)`, anchors dropped, URLs skipped.
fn markdown_links(text: &str) -> Vec<String> {
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .map(|target| target.split('#').next().unwrap_or("").trim().to_string())
        .filter(|t| !t.is_empty() && !t.contains(':') && !t.contains(' '))
        .collect()
}

fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Proves the .deb suggests the Debian packages get-llama.sh needs and ships docs/ and the
/// lintian override.
#[test]
fn the_deb_suggests_what_get_llama_needs_and_ships_the_docs() {
    let manifest = read("talos-cli/Cargo.toml");
    let suggests = manifest
        .lines()
        .find(|l| l.starts_with("suggests = "))
        .unwrap();
    assert_eq!(suggests, r#"suggests = "g++, make, cmake, python3-pip""#);
    assert!(
        manifest
            .contains(r#"["target/release/generated/doc/**/*", "usr/share/doc/talos/", "644"]"#)
    );
    assert!(manifest.contains("usr/share/lintian/overrides/talos"));
    let overrides = read("packaging/debian/talos.lintian-overrides");
    assert!(overrides.contains("\ntalos: embedded-library libyaml [usr/bin/talosd]\n"));
    assert!(overrides.starts_with("# "), "the override says why");
}

/// Proves get-llama.sh checks first: on a machine without g++, make, cmake or pip it names each
/// with its Debian package, exits 1, and has downloaded and created nothing.
#[test]
fn get_llama_names_what_is_missing_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    // Only what the script's first lines use; python3 answers everything but `-m pip`.
    for tool in [
        "bash",
        "date",
        "id",
        "nproc",
        "mkdir",
        "grep",
        "sha256sum",
        "dirname",
    ] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .unwrap();
        let path = String::from_utf8(found.stdout).unwrap();
        std::os::unix::fs::symlink(path.trim(), bin.join(tool)).unwrap();
    }
    let python = bin.join("python3");
    std::fs::write(
        &python,
        "#!/bin/sh\n[ \"$1\" = -m ] && [ \"$2\" = pip ] && exit 1\nexit 0\n",
    )
    .unwrap();
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    let prefix = dir.path().join("llama");
    let out = Command::new(bin.join("bash"))
        .arg(root().join("packaging/get-llama.sh"))
        .env_clear()
        .env("PATH", &bin)
        .env("HOME", dir.path())
        .env("TALOS_LLAMA_HOME", &prefix)
        .env("TALOS_GET_LLAMA_APT", "0")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    for line in [
        "  g++: Debian package g++",
        "  make: Debian package make",
        "  cmake: Debian package cmake",
        "  pip (python3 -m pip): Debian package python3-pip",
        "sudo apt-get install g++ make cmake python3-pip",
    ] {
        assert!(stderr.contains(line), "{line:?} in {stderr}");
    }
    assert!(!prefix.exists(), "nothing was created or downloaded");
}

/// Proves first-turn.sh asks cargo where it built (CARGO_TARGET_DIR, a config's target-dir)
/// rather than assuming ./target, and that when the build left no binary it says the failure
/// is its own and never that the model did not manage the edit. cargo is stood in for by a
/// script that builds nothing and names an empty target directory; llama-server must already
/// be installed (get-llama.sh then returns at once), else the test says it skipped.
#[test]
fn first_turn_finds_cargo_s_target_dir_and_never_blames_the_model_for_its_own_failure() {
    let Ok(parts) = talos_tests::real_llama::RealParts::find() else {
        eprintln!("skipped: llama-server and the model are not installed (packaging/get-llama.sh)");
        return;
    };
    let script = read("packaging/first-turn.sh");
    assert!(
        !script.contains("$PWD/target/release"),
        "first-turn.sh assumes ./target"
    );
    let scratch = tempfile::tempdir().unwrap();
    let bin = scratch.path().join("bin");
    let target = scratch.path().join("elsewhere");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&target).unwrap();
    let cargo = bin.join("cargo");
    std::fs::write(
        &cargo,
        format!(
            "#!/bin/sh\ncase \"$1\" in\n  metadata) printf '{{\"target_directory\":\"%s\"}}\\n' '{}' ;;\nesac\nexit 0\n",
            target.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .arg(root().join("packaging/first-turn.sh"))
        .env("PATH", path)
        .env("TALOS_LLAMA_HOME", &parts.home)
        .env("XDG_DATA_HOME", scratch.path().join("data"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains(&format!("{}/release/talos", target.display()))
            && text.contains("not of the model"),
        "{text}"
    );
    assert!(!text.contains("the model did not manage"), "{text}");
}
