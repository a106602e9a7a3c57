//! The wire spelling of the protocol's enums (`COMPLETE`, `approveForSession`, ...) as shown
//! to people, by exhaustive `match` so a new variant is a compile error here.

use talos_protocol::event::ApprovalSource;
use talos_protocol::{Classification, CompletionStatus, Decision};

/// The wire spelling of a completion status.
pub fn status_name(status: CompletionStatus) -> &'static str {
    match status {
        CompletionStatus::Complete => "COMPLETE",
        CompletionStatus::Partial => "PARTIAL",
        CompletionStatus::Blocked => "BLOCKED",
        CompletionStatus::AdvisoryOnly => "ADVISORY_ONLY",
        CompletionStatus::Failed => "FAILED",
        CompletionStatus::Cancelled => "CANCELLED",
    }
}

/// The wire spelling of a classification.
pub fn classification_name(classification: Classification) -> &'static str {
    match classification {
        Classification::CompletedVerified => "COMPLETED_VERIFIED",
        Classification::CompletedUnverified => "COMPLETED_UNVERIFIED",
        Classification::ReadOnlyAnswered => "READ_ONLY_ANSWERED",
        Classification::Partial => "PARTIAL",
        Classification::BlockedByApproval => "BLOCKED_BY_APPROVAL",
        Classification::BlockedByPolicy => "BLOCKED_BY_POLICY",
        Classification::AdvisoryOnly => "ADVISORY_ONLY",
        Classification::Failed => "FAILED",
        Classification::Cancelled => "CANCELLED",
        Classification::ContractAmbiguous => "CONTRACT_AMBIGUOUS",
    }
}

/// The wire spelling of a decision.
pub fn decision_name(decision: Decision) -> &'static str {
    match decision {
        Decision::Approve => "approve",
        Decision::ApproveForSession => "approveForSession",
        Decision::Deny => "deny",
    }
}

/// The wire spelling of an approval source.
pub fn source_name(source: ApprovalSource) -> &'static str {
    match source {
        ApprovalSource::Client => "client",
        ApprovalSource::Disconnect => "disconnect",
        ApprovalSource::Timeout => "timeout",
        ApprovalSource::Cancelled => "cancelled",
        ApprovalSource::Remembered => "remembered",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wire_names_match_serde() {
        for status in [
            CompletionStatus::Complete,
            CompletionStatus::AdvisoryOnly,
            CompletionStatus::Cancelled,
        ] {
            assert_eq!(
                serde_json::to_value(status).unwrap(),
                json!(status_name(status))
            );
        }
        for classification in [
            Classification::CompletedVerified,
            Classification::ReadOnlyAnswered,
            Classification::BlockedByPolicy,
        ] {
            assert_eq!(
                serde_json::to_value(classification).unwrap(),
                json!(classification_name(classification))
            );
        }
        for decision in [
            Decision::Approve,
            Decision::ApproveForSession,
            Decision::Deny,
        ] {
            assert_eq!(
                serde_json::to_value(decision).unwrap(),
                json!(decision_name(decision))
            );
        }
        for source in [
            ApprovalSource::Client,
            ApprovalSource::Disconnect,
            ApprovalSource::Remembered,
        ] {
            assert_eq!(
                serde_json::to_value(source).unwrap(),
                json!(source_name(source))
            );
        }
    }
}
