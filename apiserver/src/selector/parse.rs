//! Parsing the `?labelSelector=` string syntax: apimachinery's lexer and parser, with its error messages.

use std::collections::BTreeSet;

use super::error::SelectorError;
use super::messages::{go_quote, invalid, joined, qualified_name_errors};
use super::requirement::{Operator, Requirement};

// --- lexer -----------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Token {
    Error,
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

pub(super) fn keyword(s: &[u8]) -> Option<Token> {
    Some(match s {
        b")" => Token::ClosedPar,
        b"," => Token::Comma,
        b"!" => Token::DoesNotExist,
        b"==" => Token::DoubleEquals,
        b"=" => Token::Equals,
        b">" => Token::GreaterThan,
        b"in" => Token::In,
        b"<" => Token::LessThan,
        b"!=" => Token::NotEquals,
        b"notin" => Token::NotIn,
        b"(" => Token::OpenPar,
        _ => return None,
    })
}

pub(super) fn is_whitespace(ch: u8) -> bool {
    matches!(ch, b' ' | b'\t' | b'\r' | b'\n')
}

pub(super) fn is_special(ch: u8) -> bool {
    matches!(ch, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Byte-wise lexer; a NUL byte reads like the end of input, as in apimachinery.
pub(super) struct Lexer<'a> {
    pub(super) s: &'a [u8],
    pub(super) pos: usize,
}

impl Lexer<'_> {
    pub(super) fn read(&mut self) -> u8 {
        match self.s.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                b
            }
            None => 0,
        }
    }

    pub(super) fn unread(&mut self) {
        self.pos = self.pos.saturating_sub(1);
    }

    pub(super) fn lex(&mut self) -> (Token, String) {
        let mut ch = self.read();
        while is_whitespace(ch) {
            ch = self.read();
        }
        if ch == 0 {
            return (Token::EndOfString, String::new());
        }
        self.unread();
        if is_special(ch) {
            self.scan_special()
        } else {
            self.scan_identifier()
        }
    }

    pub(super) fn scan_identifier(&mut self) -> (Token, String) {
        let mut buf = Vec::new();
        loop {
            let ch = self.read();
            if ch == 0 {
                break;
            }
            if is_special(ch) || is_whitespace(ch) {
                self.unread();
                break;
            }
            buf.push(ch);
        }
        // The run is delimited by ASCII bytes, so it is valid UTF-8.
        let lit = String::from_utf8_lossy(&buf).into_owned();
        match keyword(&buf) {
            Some(tok) => (tok, lit),
            None => (Token::Identifier, lit),
        }
    }

    /// Longest run of special symbols that still forms an operator.
    pub(super) fn scan_special(&mut self) -> (Token, String) {
        let mut buf = Vec::new();
        let mut last = None;
        loop {
            let ch = self.read();
            if ch == 0 {
                break;
            }
            if !is_special(ch) {
                self.unread();
                break;
            }
            buf.push(ch);
            if let Some(tok) = keyword(&buf) {
                last = Some((tok, String::from_utf8_lossy(&buf).into_owned()));
            } else if last.is_some() {
                self.unread();
                break;
            }
        }
        last.unwrap_or_else(|| {
            (
                Token::Error,
                format!(
                    "error expected: keyword found '{}'",
                    String::from_utf8_lossy(&buf)
                ),
            )
        })
    }
}

// --- parser ----------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Context {
    KeyAndOperator,
    Values,
}

pub(super) struct Parser {
    pub(super) items: Vec<(Token, String)>,
    pub(super) pos: usize,
}

pub(super) const BINARY_OPERATORS: &str = "in, notin, =, ==, !=, gt, lt";

impl Parser {
    pub(super) fn new(s: &str) -> Self {
        let mut lexer = Lexer {
            s: s.as_bytes(),
            pos: 0,
        };
        let mut items = Vec::new();
        loop {
            let item = lexer.lex();
            let end = item.0 == Token::EndOfString;
            items.push(item);
            if end {
                break;
            }
        }
        Parser { items, pos: 0 }
    }

    pub(super) fn at(&self, idx: usize, ctx: Context) -> (Token, String) {
        let (tok, lit) = self
            .items
            .get(idx)
            .cloned()
            .unwrap_or((Token::EndOfString, String::new()));
        match tok {
            // Inside values, `in` and `notin` are ordinary words.
            Token::In | Token::NotIn if ctx == Context::Values => (Token::Identifier, lit),
            _ => (tok, lit),
        }
    }

    pub(super) fn lookahead(&self, ctx: Context) -> (Token, String) {
        self.at(self.pos, ctx)
    }

    pub(super) fn consume(&mut self, ctx: Context) -> (Token, String) {
        let item = self.at(self.pos, ctx);
        if self.pos < self.items.len() {
            self.pos += 1;
        }
        item
    }

    pub(super) fn parse(&mut self) -> Result<Vec<Requirement>, SelectorError> {
        let mut requirements = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Context::Values);
            match tok {
                Token::Identifier | Token::DoesNotExist => {
                    let r = self.parse_requirement().map_err(|e| {
                        SelectorError::new(format!("unable to parse requirement: {e}"))
                    })?;
                    requirements.push(r);
                    let (tok, lit) = self.consume(Context::Values);
                    match tok {
                        Token::EndOfString => return Ok(requirements),
                        Token::Comma => {
                            let (next, lit) = self.lookahead(Context::Values);
                            if next != Token::Identifier && next != Token::DoesNotExist {
                                return Err(SelectorError::new(format!(
                                    "found '{lit}', expected: identifier after ','"
                                )));
                            }
                        }
                        _ => {
                            return Err(SelectorError::new(format!(
                                "found '{lit}', expected: ',' or 'end of string'"
                            )));
                        }
                    }
                }
                Token::EndOfString => return Ok(requirements),
                _ => {
                    return Err(SelectorError::new(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    )));
                }
            }
        }
    }

    pub(super) fn parse_requirement(&mut self) -> Result<Requirement, SelectorError> {
        let (key, unary) = self.parse_key_and_infer_operator()?;
        if let Some(op) = unary {
            return Requirement::new(&key, op, Vec::new());
        }
        let op = self.parse_operator()?;
        let values = match op {
            Operator::In | Operator::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        Requirement::new(&key, op, values.into_iter().collect())
    }

    /// The key, plus the operator when it is unary (`key` alone or `!key`).
    pub(super) fn parse_key_and_infer_operator(
        &mut self,
    ) -> Result<(String, Option<Operator>), SelectorError> {
        let mut unary = None;
        let (mut tok, mut lit) = self.consume(Context::Values);
        if tok == Token::DoesNotExist {
            unary = Some(Operator::DoesNotExist);
            (tok, lit) = self.consume(Context::Values);
        }
        if tok != Token::Identifier {
            return Err(SelectorError::new(format!(
                "found '{lit}', expected: identifier"
            )));
        }
        if let Some(detail) = joined(qualified_name_errors(&lit)) {
            // apimachinery passes a nil field path here, which prints as `<nil>`.
            return Err(SelectorError::new(invalid(
                "<nil>",
                &go_quote(&lit),
                &detail,
            )));
        }
        let (next, _) = self.lookahead(Context::Values);
        if unary.is_none() && matches!(next, Token::EndOfString | Token::Comma) {
            unary = Some(Operator::Exists);
        }
        Ok((lit, unary))
    }

    pub(super) fn parse_operator(&mut self) -> Result<Operator, SelectorError> {
        let (tok, lit) = self.consume(Context::KeyAndOperator);
        Ok(match tok {
            Token::In => Operator::In,
            Token::Equals => Operator::Equals,
            Token::DoubleEquals => Operator::DoubleEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            Token::NotIn => Operator::NotIn,
            Token::NotEquals => Operator::NotEquals,
            _ => {
                return Err(SelectorError::new(format!(
                    "found '{lit}', expected: {BINARY_OPERATORS}"
                )));
            }
        })
    }

    /// `( v1, v2, ... )`; empty entries are the empty string.
    pub(super) fn parse_values(&mut self) -> Result<BTreeSet<String>, SelectorError> {
        let (tok, lit) = self.consume(Context::Values);
        if tok != Token::OpenPar {
            // Sic: no comma before "expected" in this message.
            return Err(SelectorError::new(format!("found '{lit}' expected: '('")));
        }
        let (tok, lit) = self.lookahead(Context::Values);
        match tok {
            Token::Identifier | Token::Comma => {
                let set = self.parse_identifiers_list()?;
                let (closing, _) = self.consume(Context::Values);
                if closing != Token::ClosedPar {
                    return Err(SelectorError::new(format!("found '{lit}', expected: ')'")));
                }
                Ok(set)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(BTreeSet::from([String::new()]))
            }
            _ => Err(SelectorError::new(format!(
                "found '{lit}', expected: ',', ')' or identifier"
            ))),
        }
    }

    pub(super) fn parse_identifiers_list(&mut self) -> Result<BTreeSet<String>, SelectorError> {
        let mut set = BTreeSet::new();
        loop {
            let (tok, lit) = self.consume(Context::Values);
            match tok {
                Token::Identifier => {
                    set.insert(lit);
                    let (next, lit) = self.lookahead(Context::Values);
                    match next {
                        Token::Comma => {}
                        Token::ClosedPar => return Ok(set),
                        _ => {
                            return Err(SelectorError::new(format!(
                                "found '{lit}', expected: ',' or ')'"
                            )));
                        }
                    }
                }
                Token::Comma => {
                    if set.is_empty() {
                        set.insert(String::new());
                    }
                    let (next, _) = self.lookahead(Context::Values);
                    if next == Token::ClosedPar {
                        set.insert(String::new());
                        return Ok(set);
                    }
                    if next == Token::Comma {
                        self.consume(Context::Values);
                        set.insert(String::new());
                    }
                }
                _ => {
                    return Err(SelectorError::new(format!(
                        "found '{lit}', expected: ',', or identifier"
                    )));
                }
            }
        }
    }

    /// The single value after `=`, `==`, `!=`, `>` or `<`; nothing at all means `""`.
    pub(super) fn parse_exact_value(&mut self) -> Result<BTreeSet<String>, SelectorError> {
        let (next, _) = self.lookahead(Context::Values);
        if matches!(next, Token::EndOfString | Token::Comma) {
            return Ok(BTreeSet::from([String::new()]));
        }
        let (tok, lit) = self.consume(Context::Values);
        if tok == Token::Identifier {
            Ok(BTreeSet::from([lit]))
        } else {
            Err(SelectorError::new(format!(
                "found '{lit}', expected: identifier"
            )))
        }
    }
}
