//! The index's tokenizer: `talos_core::retrieval::terms` as a tantivy tokenizer, so code and
//! prose are split the same way when indexed and when queried.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

/// The name the schema's text fields use.
pub const NAME: &str = "talos_code";

#[derive(Debug, Clone, Default)]
pub struct CodeTokenizer;

pub struct CodeTokens {
    tokens: Vec<Token>,
    next: usize,
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokens;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokens {
        let tokens = talos_core::retrieval::terms(text)
            .into_iter()
            .map(|(position, text)| Token {
                offset_from: 0,
                offset_to: 0,
                position,
                text,
                position_length: 1,
            })
            .collect();
        CodeTokens { tokens, next: 0 }
    }
}

impl TokenStream for CodeTokens {
    fn advance(&mut self) -> bool {
        if self.next < self.tokens.len() {
            self.next += 1;
            true
        } else {
            false
        }
    }

    fn token(&self) -> &Token {
        &self.tokens[self
            .next
            .saturating_sub(1)
            .min(self.tokens.len().saturating_sub(1))]
    }

    fn token_mut(&mut self) -> &mut Token {
        let at = self
            .next
            .saturating_sub(1)
            .min(self.tokens.len().saturating_sub(1));
        &mut self.tokens[at]
    }
}
