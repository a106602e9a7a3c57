//! talos-core's table tests: each file holds one rule's rows (the resolver, the ladder, the
//! turn machine's steps, budgets, hooks, the approval text...), run as one test binary (issue 30,
//! item 5). `turn_support` is the pretend daemon the turn rows share.

mod approval_text;
mod batch;
mod budget;
mod catalogue;
mod command;
mod command_ask;
mod corpus;
mod history;
mod history_records;
mod history_repair;
mod history_replay;
mod hooks;
mod reading;
mod resolver;
mod sanitize;
mod textcall;
mod turn;
mod turn_call;
mod turn_finish;
mod turn_loop;
mod turn_machine;
mod turn_outcome;
mod turn_records;
mod turn_route;
mod turn_support;
mod turn_verified;
mod turn_view;
mod turn_web;
mod turn_web_finish;
mod web;
