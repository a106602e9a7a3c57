//! The contract against the workspace's files and the person's choice, one row each
//! (`contract/files.rs`, `contract/readings.rs`, issue 34 items 2 and 6): a name written
//! without a folder is the one workspace file with that basename; a change verb on an existing
//! file read as a question by default is uncertain, and each choice plans its own turn; a turn
//! whose reading stays uncertain ends before the model, CONTRACT_AMBIGUOUS, naming both.

use crate::turn_support::{plan_for, settings};
use pretty_assertions::assert_eq;
use talos_core::contract::{Choice, Reading, TaskType, choose, readings, resolve, with_files};
use talos_core::ladder::Grants;
use talos_core::modes::SessionMode;
use talos_core::outcome::Fine;
use talos_core::turn::Turn;
use talos_core::turn::machine::{TurnEffect, TurnInput};

/// A request with a change verb and no imperative or question shape: read as a question only
/// by default, so uncertain when the file exists.
const HEDGED: &str = "I think DEBUG in config.py should change";

/// What a contract says, as the rows state it: kind, change allowed, targets to change,
/// whether it is uncertain (and about which files).
fn seen(contract: &talos_core::contract::TaskContract) -> (TaskType, bool, Vec<String>, Reading) {
    (
        contract.task_type,
        contract.mutation_allowed,
        contract.expected_targets.clone(),
        contract.reading.clone(),
    )
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// Proves each request against each workspace, then under each choice: the unique basename is
/// the file, an uncertain reading names the existing targets, "change" makes a FILE_EDIT of
/// them and "question" a READ_ONLY_QA, both settled.
#[test]
fn with_files_then_choose_rows() {
    let uncertain = |targets: &[&str]| Reading::Uncertain {
        targets: strings(targets),
    };
    #[allow(clippy::type_complexity)]
    let rows: Vec<(&str, &[&str], (TaskType, bool, &[&str], Reading))> = vec![
        (
            HEDGED,
            &["config.py"],
            (
                TaskType::ReadOnlyQa,
                false,
                &["config.py"],
                uncertain(&["config.py"]),
            ),
        ),
        (
            HEDGED,
            &["src/config.py", "README.md"],
            (
                TaskType::ReadOnlyQa,
                false,
                &["src/config.py"],
                uncertain(&["src/config.py"]),
            ),
        ),
        // No file by that name: nothing to change, a question.
        (
            HEDGED,
            &[],
            (
                TaskType::ReadOnlyQa,
                false,
                &["config.py"],
                Reading::Settled,
            ),
        ),
        // Two files share the basename: neither is chosen, and nothing exists as written.
        (
            HEDGED,
            &["a/config.py", "b/config.py"],
            (
                TaskType::ReadOnlyQa,
                false,
                &["config.py"],
                Reading::Settled,
            ),
        ),
        (
            "In config.py turn DEBUG off",
            &["src/config.py"],
            (
                TaskType::FileEdit,
                true,
                &["src/config.py"],
                Reading::Settled,
            ),
        ),
        (
            "What does config.py do?",
            &["config.py"],
            (
                TaskType::ReadOnlyQa,
                false,
                &["config.py"],
                Reading::Settled,
            ),
        ),
        // A file the request creates is new, whatever exists elsewhere with its name.
        (
            "Create notes.txt with the content: hello",
            &["docs/notes.txt"],
            (TaskType::FileCreate, true, &["notes.txt"], Reading::Settled),
        ),
        // A question for information whose verb is a change verb asks about it, not for it.
        (
            "What does config.py set?",
            &["config.py"],
            (
                TaskType::ReadOnlyQa,
                false,
                &["config.py"],
                Reading::Settled,
            ),
        ),
        (
            "Why change DEBUG in config.py",
            &["config.py"],
            (
                TaskType::ReadOnlyQa,
                false,
                &["config.py"],
                Reading::Settled,
            ),
        ),
    ];
    for (request, files, (kind, allowed, targets, reading)) in rows {
        let contract = with_files(resolve(request), &strings(files));
        assert_eq!(
            seen(&contract),
            (kind, allowed, strings(targets), reading.clone()),
            "{request} with {files:?}"
        );
        let Reading::Uncertain { targets: asked } = reading else {
            continue;
        };
        assert_eq!(
            seen(&choose(contract.clone(), Choice::Change)),
            (TaskType::FileEdit, true, asked.clone(), Reading::Settled),
            "{request} with {files:?}, chosen: change"
        );
        let question = choose(contract, Choice::Question);
        assert_eq!(
            (
                question.task_type,
                question.mutation_allowed,
                question.reading
            ),
            (TaskType::ReadOnlyQa, false, Reading::Settled),
            "{request} with {files:?}, chosen: question"
        );
    }
}

/// Proves a turn whose reading is still uncertain ends at its first step, before the server is
/// probed or the model asked, CONTRACT_AMBIGUOUS (blocked), with both readings in its answer;
/// and that the texts the person is asked with name the file.
#[test]
fn an_unchosen_uncertain_turn_ends_before_the_model() {
    let contract = with_files(resolve(HEDGED), &strings(&["config.py"]));
    let asked = readings(&contract).expect("the hedged request is uncertain");
    assert_eq!(
        (asked.change.as_str(), asked.question.as_str()),
        ("Change config.py?", "Only answer a question")
    );
    let mut turn = Turn::new(
        plan_for(contract, SessionMode::Agent),
        settings(SessionMode::Agent),
        Grants::default(),
    );
    let TurnEffect::Finish(done) = turn.step(TurnInput::Start) else {
        panic!("an uncertain turn must end at its first step");
    };
    assert_eq!(done.fine, Fine::ContractAmbiguous);
    assert_eq!(done.fine.as_str(), "CONTRACT_AMBIGUOUS");
    assert_eq!(done.answer, asked.ambiguous);
    assert!(
        done.answer.starts_with(
            "This request could mean: change config.py, or only answer a question about it; say which."
        ),
        "{}",
        done.answer
    );
    assert!(turn.record().model_calls.is_empty());
    // In a read-only mode there is nothing to choose: the question is the only reading.
    let read_only = plan_for(
        with_files(resolve(HEDGED), &strings(&["config.py"])),
        SessionMode::Ask,
    );
    assert_eq!(read_only.contract().reading, Reading::Settled);
}
