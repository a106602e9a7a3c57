//! The wire, checked from fixtures: every method's params and result and every event round-trip
//! through the protocol types (`examples`), and validate against the published JSON Schema
//! (`schema`). One test binary (issue 30, item 5).

mod examples;
mod schema;
