//! Typed workspace operations through the socket: each is offered only when asked for, always
//! asks (a remembered write approval never covers them), is checkpointed, applied and verified;
//! hostile paths and bad arguments are refused before approval and nothing changes.

use serde_json::{Value, json};
use talos_protocol::trace::TraceRecord;
use talos_protocol::{Classification, CompletionStatus, TurnOutcome};
use talos_tests::fake_llama::{FakeLlama, Reply, offered_tools, scripted};
use talos_tests::harness::{Client, TestDaemon, approvals, approve_all};

fn call(name: &str, args: Value) -> Reply {
    Reply::ToolCalls(vec![(name.into(), args.to_string())])
}

struct Ws {
    llama: FakeLlama,
    daemon: TestDaemon,
    dir: tempfile::TempDir,
    client: Client,
    session: String,
}

async fn setup(steps: Vec<Reply>) -> Ws {
    let llama = FakeLlama::start(true, scripted(steps)).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("old.txt"), "old\n").unwrap();
    std::fs::write(dir.path().join("notes.md"), "# notes\n").unwrap();
    std::fs::create_dir(dir.path().join("build")).unwrap();
    std::fs::write(dir.path().join("build/out.o"), "obj").unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(dir.path(), "agent").await;
    Ws {
        llama,
        daemon,
        dir,
        client,
        session,
    }
}

impl Ws {
    async fn turn(
        &mut self,
        prompt: &str,
        decision: &'static str,
    ) -> (TurnOutcome, Vec<talos_protocol::Message>) {
        self.client
            .turn_with(&self.session, prompt, approve_all(decision))
            .await
    }
    fn exists(&self, rel: &str) -> bool {
        self.dir.path().join(rel).exists()
    }
    fn trace(&self) -> TraceRecord {
        self.daemon
            .traces()
            .into_iter()
            .max_by_key(|t| t.turn_number)
            .unwrap()
    }
}

#[tokio::test]
async fn an_approved_delete_is_destructive_checkpointed_and_verified() {
    let mut w = setup(vec![
        call("talos.delete_path", json!({"path": "old.txt"})),
        Reply::Text("Deleted.".into()),
    ])
    .await;
    let (outcome, seen) = w.turn("Delete the file old.txt", "approve").await;
    assert_eq!(
        offered_tools(&w.llama.requests()[0]),
        vec!["talos.delete_path"]
    );
    let asked = approvals(&seen);
    assert_eq!(asked.len(), 1);
    assert_eq!(
        asked[0].description,
        "destructive operation: talos.delete_path"
    );
    assert!(!asked[0].remember_eligible);
    assert!(!w.exists("old.txt"));
    assert_eq!(
        outcome.classification,
        Classification::CompletedVerified,
        "{outcome:?}"
    );
    let objects = w.daemon.checkpoint_objects();
    assert!(
        objects
            .iter()
            .any(|o| std::fs::read(o).unwrap() == b"old\n"),
        "the deleted bytes are in the checkpoint"
    );
    assert_eq!(w.trace().verification[0].summary, "Deleted old.txt");
}

#[tokio::test]
async fn a_remembered_write_approval_never_covers_a_workspace_operation() {
    let mut w = setup(vec![
        call(
            "talos.write_file",
            json!({"path": "a.txt", "content": "a\n"}),
        ),
        call(
            "talos.rename_path",
            json!({"path": "a.txt", "new_name": "b.txt"}),
        ),
        Reply::Text("Done.".into()),
    ])
    .await;
    let (_, seen) = w.turn("Create a.txt", "approveForSession").await;
    assert_eq!(
        approvals(&seen).len(),
        1,
        "the write was asked once and remembered"
    );
    let (outcome, seen) = w.turn("Rename a.txt to b.txt", "deny").await;
    assert_eq!(
        approvals(&seen).len(),
        1,
        "the rename is asked again despite the remembered write approval"
    );
    assert_eq!(outcome.classification, Classification::BlockedByApproval);
    assert!(w.exists("a.txt") && !w.exists("b.txt"));
}

#[tokio::test]
async fn a_batch_creates_a_folder_and_moves_a_file_into_it() {
    let batch = json!({"operations": [{"op": "mkdir", "path": "docs"}, {"op": "move", "from": "notes.md", "to": "docs/notes.md"}]});
    let mut w = setup(vec![
        call("talos.apply_workspace_batch", batch),
        Reply::Text("Done.".into()),
    ])
    .await;
    let (outcome, seen) = w
        .turn("Create a folder docs and move notes.md into it", "approve")
        .await;
    let asked = approvals(&seen);
    assert_eq!(asked.len(), 1);
    let details = asked[0].details.join("\n");
    assert!(
        details.contains("mkdir docs") && details.contains("move notes.md -> docs/notes.md"),
        "{details}"
    );
    assert!(w.exists("docs/notes.md") && !w.exists("notes.md"));
    assert_eq!(
        outcome.classification,
        Classification::CompletedVerified,
        "{outcome:?}"
    );
    assert_eq!(
        offered_tools(&w.llama.requests()[0]),
        vec![
            "talos.apply_workspace_batch",
            "talos.mkdir",
            "talos.move_path"
        ]
    );
}

#[tokio::test]
async fn hostile_and_invalid_operations_are_refused_before_approval() {
    let outside = tempfile::tempdir().unwrap();
    let link = outside.path().join("target");
    std::fs::create_dir(&link).unwrap();
    let rows: Vec<(&str, Reply, &str)> = vec![
        (
            "Move old.txt to ../old.txt",
            call(
                "talos.move_path",
                json!({"from": "old.txt", "to": "../old.txt"}),
            ),
            "WORKSPACE_ESCAPE",
        ),
        (
            "Delete the folder build",
            call("talos.delete_path", json!({"path": "build"})),
            "set recursive=true",
        ),
        (
            "Rename old.txt to x/y.txt",
            call(
                "talos.rename_path",
                json!({"path": "old.txt", "new_name": "../y.txt"}),
            ),
            "single path segment",
        ),
        (
            "Delete the .git folder",
            call(
                "talos.delete_path",
                json!({"path": ".git", "recursive": true}),
            ),
            "PROTECTED_PATH_DENY",
        ),
        (
            "Delete the folder .",
            call("talos.delete_path", json!({"path": ".", "recursive": true})),
            "workspace root",
        ),
        (
            "Copy old.txt to old2.txt",
            call(
                "talos.copy_path",
                json!({"from": "old.txt", "to": "notes.md"}),
            ),
            "Destination already exists",
        ),
        (
            "Move old.txt into build and delete the folder ../etc",
            call(
                "talos.apply_workspace_batch",
                json!({"operations": [{"op": "move", "from": "old.txt", "to": "build/old.txt"}, {"op": "delete", "path": "../etc"}]}),
            ),
            "WORKSPACE_ESCAPE",
        ),
    ];
    for (prompt, reply, expected) in rows {
        let mut w = setup(vec![reply, Reply::Text("Done.".into())]).await;
        std::fs::create_dir(w.dir.path().join(".git")).unwrap();
        let (outcome, seen) = w.turn(prompt, "approve").await;
        assert!(
            approvals(&seen).is_empty(),
            "{prompt}: refused before approval"
        );
        assert!(
            w.exists("old.txt")
                && w.exists("notes.md")
                && w.exists("build/out.o")
                && w.exists(".git"),
            "{prompt}: nothing changed"
        );
        let trace = w.trace();
        let text = format!(
            "{} {}",
            serde_json::to_string(&trace.permission_decisions).unwrap(),
            serde_json::to_string(&trace.tool_calls).unwrap()
        );
        assert!(
            text.contains(expected),
            "{prompt}: expected {expected} in {text}"
        );
        assert_ne!(
            outcome.status,
            CompletionStatus::Complete,
            "{prompt}: {outcome:?}"
        );
    }
}
