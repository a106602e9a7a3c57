use talos_core::contract::resolve;
#[test]
fn probe() {
    for r in [
        "Now change it back.",
        "change it back",
        "revert that",
        "undo that",
        "put it back",
        "restore the old value",
        "What did you change in the last two turns?",
        "which files did you touch?",
        "show me what you changed",
        "what did you change so far?",
        "what did you change today?",
        "Undo your last change",
        "revert the last change",
        "what did you change?",
        "Revert it.",
    ] {
        let c = resolve(r);
        eprintln!(
            "{r:?} => {} {} {:?} {}",
            c.task_type.as_str(),
            c.mutation_requested,
            c.expected_targets,
            c.reason.as_str()
        );
    }
}
