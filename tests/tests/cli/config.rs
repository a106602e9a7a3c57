//! `talos config path` and `talos config check [FILE]`: the file in use, and validation without
//! a daemon giving the daemon's own errors with their line numbers.

use talos_tests::cli::{talos, text};

#[test]
fn config_path_prints_the_file_in_use() {
    let home = tempfile::tempdir().unwrap();
    let out = talos(home.path(), &["config", "path"], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).trim(),
        home.path().join("config.yaml").display().to_string()
    );
    assert!(!home.path().join("run").exists(), "no daemon was started");
}

#[test]
fn config_check_accepts_a_valid_file_and_a_missing_default() {
    let home = tempfile::tempdir().unwrap();
    let out = talos(home.path(), &["config", "check"], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("the defaults apply"));
    std::fs::write(
        home.path().join("config.yaml"),
        "approval:\n  timeout_secs: 30\n",
    )
    .unwrap();
    let out = talos(home.path(), &["config", "check"], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(": valid"),
        "{}",
        text(&out.stdout)
    );
    assert!(!home.path().join("run").exists(), "no daemon was started");
}

#[test]
fn config_check_gives_the_daemons_error_with_its_line() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("other.yaml");
    let bad = [
        "approval:\n  timeout_secs: 30\nmodle:\n  mode: connect_only\n",
        "approval:\n  timeout_secs: 0\n",
        "approval:\n  timeout_secs: [\n",
    ];
    for (index, yaml) in bad.iter().enumerate() {
        std::fs::write(&file, yaml).unwrap();
        let daemon_error = talosd::config::Config::load(&file)
            .err()
            .unwrap_or_else(|| panic!("case {index} is valid"))
            .to_string();
        let out = talos(
            home.path(),
            &["config", "check", file.to_str().unwrap()],
            "",
        );
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "case {index}: {stderr}");
        assert!(stderr.contains(&daemon_error), "case {index}: {stderr}");
    }
    // The unknown key is named with its line.
    std::fs::write(&file, bad[0]).unwrap();
    let out = talos(
        home.path(),
        &["config", "check", file.to_str().unwrap()],
        "",
    );
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("modle") && stderr.contains("line 3"),
        "{stderr}"
    );
}
