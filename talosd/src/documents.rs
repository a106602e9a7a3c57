//! Document text (issue 16): pdf, docx, xlsx, ods, odt and pptx. Parsers are attack surface,
//! so the bytes (read by the caller through `Workspace`, with every check `talos.read_file`
//! has) are handed on stdin to a child, `talosd --extract-document KIND`, that limits its own
//! address space, CPU time and file size, confines itself with Landlock (no writes anywhere,
//! no TCP where the kernel's Landlock has network rules), parses, and prints the text. The
//! parent kills it at [`TIME_LIMIT`]. A document that fails, times out or is encrypted gets
//! the capability note, never invented text.

mod child;
pub mod parse;
pub mod samples;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use talos_core::retrieval::DocumentKind;

pub use child::{FLAG, child_main};

/// Wall-clock limit of one extraction.
pub const TIME_LIMIT: Duration = Duration::from_secs(10);
/// Largest text an extraction returns.
pub const MAX_TEXT_BYTES: usize = 2 << 20;
/// The child's exit code for an encrypted document.
pub const ENCRYPTED_EXIT: i32 = 3;

static PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// Sets the `talosd` binary that runs extractions (an in-process daemon in tests names a real
/// one); by default this process's own executable.
pub fn use_program(path: PathBuf) {
    let _ = PROGRAM.set(path);
}

fn program() -> Option<PathBuf> {
    PROGRAM
        .get()
        .cloned()
        .or_else(|| std::env::current_exe().ok())
}

/// Why a document has no text; the message is the reason the capability note gives.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExtractError {
    /// The extractor child could not be started: nothing is known of the document.
    #[error("{0}")]
    NotStarted(String),
    /// The document itself: unreadable, encrypted, without text, or over a limit. The same
    /// bytes fail the same way again (the index remembers them, issue 26).
    #[error("{0}")]
    Document(String),
}

/// The text of a document, with page, sheet or slide markers.
pub fn extract(kind: DocumentKind, bytes: &[u8]) -> Result<String, ExtractError> {
    let program =
        program().ok_or_else(|| ExtractError::NotStarted("no extractor program".into()))?;
    let run = crate::runner::run_with_input_blocking(
        &program,
        &[FLAG.to_string(), kind.as_str().to_string()],
        bytes.to_vec(),
        TIME_LIMIT,
        MAX_TEXT_BYTES as u64 + 1,
    )
    .map_err(|e| ExtractError::NotStarted(format!("the extractor did not start: {e}")))?;
    let out = run.stdout;
    let failed = match run.code {
        Some(0) => {
            let mut text = String::from_utf8_lossy(&out).into_owned();
            if text.len() > MAX_TEXT_BYTES {
                let mut cut = MAX_TEXT_BYTES;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
            }
            if !text.trim().is_empty() {
                return Ok(text);
            }
            "no text found in it".to_string()
        }
        Some(ENCRYPTED_EXIT) => "it is encrypted".to_string(),
        Some(_) => format!("it is not a readable {} file", kind.as_str()),
        None => format!(
            "extraction was stopped by its {} s time limit or another limit",
            TIME_LIMIT.as_secs()
        ),
    };
    Err(ExtractError::Document(failed))
}
