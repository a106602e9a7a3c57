//! The extractor child: `talosd --extract-document KIND`, document bytes on stdin, text on
//! stdout. It limits itself before it reads a byte: address space, CPU seconds, file size
//! zero, and Landlock with no write access anywhere and no TCP bind or connect (best effort:
//! what the kernel's Landlock ABI grants).

use std::io::{Read, Write};

use talos_core::retrieval::DocumentKind;

use super::{ENCRYPTED_EXIT, MAX_TEXT_BYTES, parse};

/// The hidden first argument that turns `talosd` into the extractor.
pub const FLAG: &str = "--extract-document";
/// Address space the child may map.
const MEMORY_BYTES: u64 = 1 << 30;
/// CPU seconds the child may use.
const CPU_SECONDS: u64 = 8;
/// Largest input read from stdin.
const MAX_INPUT_BYTES: u64 = 64 << 20;

/// Runs the child; returns its exit code.
pub fn child_main(args: &[String]) -> i32 {
    let Some(kind) = args.first().and_then(|k| DocumentKind::parse(k)) else {
        return 2;
    };
    limit_self();
    let mut bytes = Vec::new();
    if std::io::stdin()
        .take(MAX_INPUT_BYTES)
        .read_to_end(&mut bytes)
        .is_err()
    {
        return 4;
    }
    match parse::text(kind, &bytes) {
        Ok(text) => {
            let cut = text.len().min(MAX_TEXT_BYTES);
            let mut end = cut;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let mut out = std::io::stdout().lock();
            if out.write_all(&text.as_bytes()[..end]).is_err() || out.flush().is_err() {
                return 4;
            }
            0
        }
        Err(parse::Failure::Encrypted) => ENCRYPTED_EXIT,
        Err(parse::Failure::Unreadable(_)) => 1,
    }
}

fn limit_self() {
    use rustix::process::{Resource, Rlimit, setrlimit};
    let set = |resource, value: u64| {
        let _ = setrlimit(
            resource,
            Rlimit {
                current: Some(value),
                maximum: Some(value),
            },
        );
    };
    set(Resource::As, MEMORY_BYTES);
    set(Resource::Cpu, CPU_SECONDS);
    set(Resource::Fsize, 0);
    set(Resource::Core, 0);
    confine();
}

#[cfg(target_os = "linux")]
fn confine() {
    use landlock::{ABI, Access, AccessFs, AccessNet, Ruleset, RulesetAttr};
    let abi = ABI::V4;
    let _ = Ruleset::default()
        .handle_access(AccessFs::from_write(abi))
        .and_then(|r| r.handle_access(AccessNet::from_all(abi)))
        .and_then(|r| r.create())
        .and_then(|r| r.restrict_self());
}

#[cfg(not(target_os = "linux"))]
fn confine() {}
