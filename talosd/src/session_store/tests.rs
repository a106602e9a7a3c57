//! Session files: one row per hostile or foreign file, each skipped with its reason, and a
//! written session read back as it was.

// std::fs here: the test homes are built and broken by path.
#![allow(clippy::disallowed_methods)]

use std::os::unix::fs::PermissionsExt;

use super::*;

fn snapshot(id: &SessionId, workspace: &Path) -> Snapshot {
    Snapshot {
        id: id.clone(),
        workspace: workspace.to_path_buf(),
        mode: Mode::Agent,
        turns: 3,
        requests: vec![
            (
                "change the title in index.html".into(),
                PriorOutcome::Denied,
            ),
            ("yes".into(), PriorOutcome::Verified),
        ],
        answers: vec![
            ("The change was denied; nothing was written.".into(), vec![]),
            (
                "index.html was changed and read back as approved.".into(),
                vec!["index.html".into()],
            ),
        ],
        last_outcome: None,
        last_findings: vec!["index.html: missing alt".into()],
        model: Some("gpu".into()),
        directory: "src/app".into(),
    }
}

#[test]
fn a_saved_session_loads_back_unchanged() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(crate::paths::Home::from_root(home.path()).sessions());
    let id = SessionId::new().unwrap();
    let saved = snapshot(&id, Path::new("/srv/project"));
    store.save(&saved, 1).unwrap();
    assert_eq!(store.load(id.as_str()).unwrap(), saved);
    let mode = std::fs::metadata(store.path(id.as_str()))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(store.remove(id.as_str()).unwrap());
    assert!(!store.remove(id.as_str()).unwrap());
    assert!(store.load(id.as_str()).is_err());
}

/// One row: a file's text (with the id it is stored under written over `{id}`) and the words
/// the skip reason must contain.
fn check(text: &str, reason: &str) {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(crate::paths::Home::from_root(home.path()).sessions());
    let id = SessionId::new().unwrap();
    std::fs::create_dir_all(store.store.path()).unwrap();
    let path = store.path(id.as_str());
    std::fs::write(&path, text.replace("{id}", id.as_str())).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (loaded, skipped) = store.load_all();
    assert!(loaded.is_empty(), "{text}");
    assert_eq!(skipped.len(), 1, "{text}");
    assert!(
        skipped[0].reason.contains(reason),
        "{text}: {:?} lacks {reason:?}",
        skipped[0].reason
    );
}

fn file(fields: &str) -> String {
    let base = serde_json::json!({
        "kind": "talos-session", "schemaVersion": 1, "sessionId": "{id}",
        "workspace": "/srv/project", "mode": "agent", "turns": 1,
        "history": [{"request": "fix app.js", "outcome": "UNVERIFIED"}],
        "lastOutcome": null, "lastFindings": [], "savedAtMs": 1
    });
    let mut base = base.as_object().unwrap().clone();
    let patch: serde_json::Value = serde_json::from_str(fields).unwrap();
    for (key, value) in patch.as_object().unwrap() {
        base.insert(key.clone(), value.clone());
    }
    serde_json::Value::Object(base).to_string()
}

#[test]
fn corrupt_and_foreign_files_are_skipped_with_their_reason() {
    check("{ not json", "not a session file");
    check("", "not a session file");
    check(&file(r#"{"kind": "something-else"}"#), "kind");
    check(&file(r#"{"schemaVersion": 2}"#), "schema version 2");
    check(
        &file(r#"{"sessionId": "ses-00000000000000000000000000000000"}"#),
        "another session",
    );
    check(&file(r#"{"workspace": "relative/dir"}"#), "not usable");
    check(&file(r#"{"workspace": "/"}"#), "not usable");
    check(
        &file(r#"{"history": [{"request": "x", "outcome": "GRANTED"}]}"#),
        "unknown outcome",
    );
    check(&file(r#"{"grants": {"rememberWrites": true}}"#), "grants");
    let many: Vec<_> = (0..=HISTORY_TURNS)
        .map(|_| serde_json::json!({"request": "x", "outcome": "FAILED"}))
        .collect();
    check(
        &file(&serde_json::json!({"history": many, "turns": 99}).to_string()),
        "more than",
    );
}

/// A session that continues another carries its turns in its history before it has run one
/// of its own: its file loads (a released session is reopened from it).
#[test]
fn a_continued_sessions_file_with_carried_turns_loads() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(crate::paths::Home::from_root(home.path()).sessions());
    let id = SessionId::new().unwrap();
    std::fs::create_dir_all(store.store.path()).unwrap();
    let path = store.path(id.as_str());
    std::fs::write(&path, file(r#"{"turns": 0}"#).replace("{id}", id.as_str())).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (loaded, skipped) = store.load_all();
    assert!(skipped.is_empty(), "{skipped:?}");
    assert_eq!(loaded.len(), 1);
}

#[test]
fn links_other_names_and_loose_permissions_are_skipped() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(crate::paths::Home::from_root(home.path()).sessions());
    std::fs::create_dir_all(store.store.path()).unwrap();
    let id = SessionId::new().unwrap();
    let good = snapshot(&id, Path::new("/srv/project"));
    store.save(&good, 1).unwrap();
    // A link named like a session, to that good file: not followed.
    let linked = SessionId::new().unwrap();
    std::os::unix::fs::symlink(store.path(id.as_str()), store.path(linked.as_str())).unwrap();
    // A copy writable by others.
    let loose = SessionId::new().unwrap();
    let text = std::fs::read_to_string(store.path(id.as_str())).unwrap();
    let loose_path = store.path(loose.as_str());
    std::fs::write(&loose_path, text.replace(id.as_str(), loose.as_str())).unwrap();
    std::fs::set_permissions(&loose_path, std::fs::Permissions::from_mode(0o666)).unwrap();
    std::fs::write(store.store.path().join("notes.txt"), "hello").unwrap();
    std::fs::write(store.store.path().join("ses-x.json"), "{}").unwrap();
    std::fs::write(store.store.path().join(".ses-x.json.talos-tmp-1"), "{").unwrap();
    let (loaded, skipped) = store.load_all();
    assert_eq!(loaded, vec![good]);
    let mut reasons: Vec<(String, String)> = skipped
        .iter()
        .map(|s| {
            let name = s.path.file_name().unwrap().to_string_lossy().into_owned();
            (name, s.reason.clone())
        })
        .collect();
    reasons.sort();
    let expect = |name: &str, words: &str| {
        assert!(
            reasons
                .iter()
                .any(|(n, r)| n.starts_with(name) && r.contains(words)),
            "{name}: {words} not in {reasons:?}"
        );
    };
    expect(linked.as_str(), "cannot open");
    expect(loose.as_str(), "writable by other users");
    expect("notes.txt", "not a session file name");
    expect("ses-x.json", "not a session id");
    assert_eq!(reasons.len(), 4, "{reasons:?}");
}

/// Proves `load_all` returns the sessions most recently saved first, whatever their names'
/// order: the daemon reopens only the newest ones at start.
#[test]
fn sessions_load_newest_first() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(crate::paths::Home::from_root(home.path()).sessions());
    let ids: Vec<SessionId> = (0..4).map(|_| SessionId::new().unwrap()).collect();
    let saved_at = [30u64, 10, 40, 20];
    for (id, at) in ids.iter().zip(saved_at) {
        store
            .save(&snapshot(id, Path::new("/srv/project")), at)
            .unwrap();
    }
    let (loaded, skipped) = store.load_all();
    assert!(skipped.is_empty(), "{skipped:?}");
    let order: Vec<&SessionId> = loaded.iter().map(|s| &s.id).collect();
    assert_eq!(order, [&ids[2], &ids[0], &ids[3], &ids[1]]);
}
