//! The core's restore decisions as wire values.

use talos_core::restore::Action;
use talos_protocol as proto;

/// A step's action as the wire names it.
pub fn action(a: &Action) -> proto::RestoreAction {
    match a {
        Action::Restore { .. } => proto::RestoreAction::Restore,
        Action::Delete | Action::DeleteTree => proto::RestoreAction::Delete,
        Action::Directory => proto::RestoreAction::Directory,
        Action::Unchanged => proto::RestoreAction::Unchanged,
        Action::SkipConflict => proto::RestoreAction::SkipConflict,
        Action::Refuse(_) => proto::RestoreAction::Refuse,
    }
}
