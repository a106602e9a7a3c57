//! A readable fallback for a document the text tools cannot read: "Summarize report.pdf. If
//! PDF is unsupported, read report.md instead." When the request names such a document and, in
//! a sentence with a fallback cue ("instead", "fall back to", "otherwise"), a readable file,
//! and it states the condition (unsupported, cannot be read, ...), the readable file takes the
//! document's role (must-read or source evidence) and the document is only mentioned: the turn
//! goes to the model, which reads the fallback, instead of ending on the capability note.

use crate::request::intent::{TargetRef, TargetRole};
use crate::request::targets::{TargetSpan, is_unreadable_document};
use crate::text::lexical::Lex;

#[rustfmt::skip]
const FALLBACK_CUES: &[&str] = &[
    "instead", "fall back to", "fallback to", "falling back to", "otherwise read",
    "otherwise use", "otherwise summarize", "otherwise summarise",
];

#[rustfmt::skip]
const CONDITIONS: &[&str] = &[
    "unsupported", "not supported", "isn't supported", "is not supported", "can't read",
    "cannot read", "can't be read", "cannot be read", "unable to read", "not readable",
    "unreadable", "can't open", "cannot open", "if that fails", "if it fails", "doesn't work",
    "does not work", "if you can't", "if you cannot", "if not possible",
];

/// The roleful targets with each readable fallback given the unreadable document's role.
pub(super) fn readable_fallback(
    lex: &Lex<'_>,
    spans: &[TargetSpan],
    mut targets: Vec<TargetRef>,
) -> Vec<TargetRef> {
    if !lex.has_any(CONDITIONS) {
        return targets;
    }
    let fallbacks: Vec<&str> = spans
        .iter()
        .filter(|s| !is_unreadable_document(&s.path) && in_fallback_sentence(lex, s))
        .map(|s| s.path.as_str())
        .collect();
    let role_of_documents = targets
        .iter()
        .filter(|t| is_unreadable_document(&t.path))
        .filter_map(|t| match t.role {
            TargetRole::MustRead | TargetRole::SourceEvidence => Some(t.role),
            TargetRole::Forbidden
            | TargetRole::MustMutate
            | TargetRole::OutputDestination
            | TargetRole::VerifyOnly
            | TargetRole::MayMutate
            | TargetRole::MentionedOnly => None,
        })
        .max_by_key(|role| role.precedence());
    let Some(role) = role_of_documents else {
        return targets;
    };
    if fallbacks.is_empty() {
        return targets;
    }
    for target in &mut targets {
        if is_unreadable_document(&target.path)
            && matches!(
                target.role,
                TargetRole::MustRead | TargetRole::SourceEvidence
            )
        {
            target.role = TargetRole::MentionedOnly;
            target.reason = "unreadable-document-with-fallback";
        } else if fallbacks.contains(&target.path.as_str())
            && target.role.precedence() < role.precedence()
            && target.role != TargetRole::Forbidden
        {
            target.role = role;
            target.reason = "readable-fallback-target";
        }
    }
    targets
}

/// Whether the span stands in a sentence that holds a fallback cue.
fn in_fallback_sentence(lex: &Lex<'_>, span: &TargetSpan) -> bool {
    let ends = |c: char| matches!(c, '.' | '!' | '?' | ';' | '\n');
    let lower = lex.lower;
    let start = lower[..span.start]
        .char_indices()
        .rev()
        .find(|&(i, c)| ends(c) && lower[i + 1..].starts_with(char::is_whitespace))
        .map_or(0, |(i, _)| i + 1);
    let end = lower[span.end..]
        .char_indices()
        .find(|&(i, c)| {
            ends(c)
                && lower[span.end + i + 1..]
                    .chars()
                    .next()
                    .is_none_or(char::is_whitespace)
        })
        .map_or(lower.len(), |(i, _)| span.end + i);
    let sentence = &lower[start..end];
    FALLBACK_CUES.iter().any(|cue| sentence.contains(cue))
}
