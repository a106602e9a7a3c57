//! talos-core's property tests (proptest): the resolver, deceptive text, sanitizing and text tool
//! calls, run as one test binary (issue 30, item 5). Failures are kept beside each file in
//! `NAME.proptest-regressions`.

mod deceptive;
mod resolver;
mod sanitize;
mod textcall;
