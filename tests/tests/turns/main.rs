//! Turns through the real daemon against scripted fake models: contracts, outcomes and
//! obligations, the loop's discipline, the ladder and what an approval shows, commands, the
//! context budget, pre-reads, answers from records, hostile workspaces, the index, documents
//! and the web verifier. One test binary, one module per subject (issue 30, item 5).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed fixture should panic

mod approval_text;
mod basics;
mod browser;
mod call_events;
mod commands;
mod constrain;
mod context;
mod contract;
mod discipline;
mod documents;
mod fidelity;
mod followups;
mod hostile_corpus;
mod hostile_ignore;
mod hostile_workspace;
mod index;
mod ladder;
mod lies;
mod obligations;
mod outcomes;
mod preread;
mod protected_values;
mod reading;
mod webcheck;
mod workspace_ops;
