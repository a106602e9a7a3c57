//! The phase of a turn (INSPECT, APPLY, VERIFY) and the phase a contract starts in. Its own
//! module, below the plan, the posture and the surface, which all speak of phases.

use crate::request::contract::TaskContract;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Inspect,
    Apply,
    Verify,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Inspect => "INSPECT",
            Phase::Apply => "APPLY",
            Phase::Verify => "VERIFY",
        }
    }

    /// APPLY when change is allowed, VERIFY when only verification is, else INSPECT.
    pub fn default_for(contract: &TaskContract) -> Phase {
        if contract.mutation_allowed {
            Phase::Apply
        } else if contract.verification_required {
            Phase::Verify
        } else {
            Phase::Inspect
        }
    }
}
