//! The grammar: tokens (exact rational numbers), the expression tree and a small
//! recursive-descent parser with bounded depth.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};
use unicode_general_category::{get_general_category, GeneralCategory};

use crate::evaluation_spec::validators::text::go_quote;

/// Deeper nesting than this (parentheses, unary signs, powers) is refused, not recursed into.
const MAX_DEPTH: usize = 200;
/// Decimal exponents beyond this are refused (exact rationals would grow without bound).
const MAX_EXPONENT: i64 = 10_000;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Token {
    Number(BigRational),
    Identifier(String),
    Open,
    Close,
    Operator(char),
    End,
}

impl Token {
    /// The token's text for messages (numbers in lowest terms; the end is empty).
    fn text(&self) -> String {
        match self {
            Token::Number(value) => value.to_string(),
            Token::Identifier(name) => name.clone(),
            Token::Open => "(".to_string(),
            Token::Close => ")".to_string(),
            Token::Operator(op) => op.to_string(),
            Token::End => String::new(),
        }
    }
}

fn is_decimal_digit(ch: char) -> bool {
    ch.is_ascii_digit()
        || (!ch.is_ascii() && get_general_category(ch) == GeneralCategory::DecimalNumber)
}

fn ten_to(power: u64) -> BigInt {
    num_traits::pow(BigInt::from(10), power as usize)
}

/// A number token's value: plain decimals exactly; `e` notation with an exponent of at most
/// [`MAX_EXPONENT`] (larger ones would make the exact value grow without bound).
fn parse_number(text: &str) -> Result<BigRational, String> {
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        None => (text, 0i64),
        Some((mantissa, exponent)) => {
            if mantissa.is_empty() || exponent.is_empty() || exponent == "+" || exponent == "-" {
                return Err(if mantissa.is_empty() || exponent.is_empty() {
                    format!("invalid scientific notation {}", go_quote(text))
                } else {
                    format!("invalid exponent in {}", go_quote(text))
                });
            }
            let exponent: i64 = exponent
                .parse()
                .map_err(|_| format!("invalid exponent in {}", go_quote(text)))?;
            if exponent.abs() > MAX_EXPONENT {
                return Err(format!("exponent out of range in {}", go_quote(text)));
            }
            (mantissa, exponent)
        }
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{whole}{fraction}");
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(format!("invalid number {}", go_quote(text)));
    }
    let digits: BigInt = digits
        .parse()
        .map_err(|_| format!("invalid number {}", go_quote(text)))?;
    let scale = exponent - fraction.len() as i64;
    Ok(if scale >= 0 {
        BigRational::from_integer(digits * ten_to(scale.unsigned_abs()))
    } else {
        BigRational::new(digits, ten_to(scale.unsigned_abs()))
    })
}

fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut index = 0;
    while index < chars.len() {
        let ch = chars[index];
        match ch {
            _ if ch.is_whitespace() => index += 1,
            '(' | '{' => {
                tokens.push(Token::Open);
                index += 1;
            }
            ')' | '}' => {
                tokens.push(Token::Close);
                index += 1;
            }
            '+' | '-' | '*' | '/' | '^' => {
                tokens.push(Token::Operator(ch));
                index += 1;
            }
            _ if is_decimal_digit(ch) || ch == '.' => {
                let start = index;
                let (mut seen_point, mut seen_exponent) = (ch == '.', false);
                index += 1;
                while index < chars.len() {
                    let next = chars[index];
                    if is_decimal_digit(next) {
                        index += 1;
                    } else if next == '.' && !seen_point && !seen_exponent {
                        seen_point = true;
                        index += 1;
                    } else if matches!(next, 'e' | 'E') && !seen_exponent {
                        seen_exponent = true;
                        index += 1;
                        if index < chars.len() && matches!(chars[index], '+' | '-') {
                            index += 1;
                        }
                    } else {
                        break;
                    }
                }
                let literal: String = chars[start..index].iter().collect();
                let mut value = parse_number(&literal)?;
                if chars.get(index) == Some(&'%') {
                    value /= BigRational::from_integer(BigInt::from(100));
                    index += 1;
                }
                tokens.push(Token::Number(value));
            }
            _ if ch.is_alphabetic() || ch == '_' => {
                let start = index;
                while index < chars.len()
                    && (chars[index].is_alphabetic()
                        || is_decimal_digit(chars[index])
                        || chars[index] == '_')
                {
                    index += 1;
                }
                tokens.push(Token::Identifier(chars[start..index].iter().collect()));
            }
            _ => return Err(format!("unexpected character '{ch}'")),
        }
    }
    tokens.push(Token::End);
    Ok(tokens)
}

/// An expression. As parsed, it is shaped like the reference's parse tree: a chain
/// `a + b - c` is the left-deep `add(add(a, b), -c)`, kept here as one list (so long chains do
/// not nest) and folded pairwise when canonicalised; `-x` is `-1 · x` (or a negative number),
/// `a / b` is `a · b⁻¹` (or the exact reciprocal of a non-zero number), `sqrt(x)` is `x^(1/2)`.
/// Its canonical form is an expression too: chains folded pairwise, sorted and simplified.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Expr {
    Number(BigRational),
    Symbol(String),
    Add(Vec<Expr>),
    Mul(Vec<Expr>),
    Pow(Box<Expr>, Box<Expr>),
}

fn negate(expr: Expr) -> Expr {
    match expr {
        Expr::Number(value) => Expr::Number(-value),
        other => Expr::Mul(vec![Expr::Number(-BigRational::one()), other]),
    }
}

fn invert(expr: Expr) -> Expr {
    match expr {
        Expr::Number(value) if !value.is_zero() => Expr::Number(value.recip()),
        other => Expr::Pow(Box::new(other), Box::new(Expr::Number(-BigRational::one()))),
    }
}

/// The two left-to-right chains of the grammar: a sum of terms (`+`, `-`) and a product of
/// powers (`*`, `/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Chain {
    Sum,
    Product,
}

impl Chain {
    /// The operator that adds its operand as it is, and the one that adds its inverse.
    fn operators(self) -> (char, char) {
        match self {
            Chain::Sum => ('+', '-'),
            Chain::Product => ('*', '/'),
        }
    }

    /// What the second operator adds: the negation of a term, the inverse of a power.
    fn inverse(self, expr: Expr) -> Expr {
        match self {
            Chain::Sum => negate(expr),
            Chain::Product => invert(expr),
        }
    }

    /// A chain of this kind of `items`.
    fn of(self, items: Vec<Expr>) -> Expr {
        match self {
            Chain::Sum => Expr::Add(items),
            Chain::Product => Expr::Mul(items),
        }
    }

    /// Append `right` to a chain that `left` starts (a chain of the same kind is extended).
    fn append(self, left: Expr, right: Expr) -> Expr {
        match (left, self) {
            (Expr::Add(mut items), Chain::Sum) | (Expr::Mul(mut items), Chain::Product) => {
                items.push(right);
                self.of(items)
            }
            (left, _) => self.of(vec![left, right]),
        }
    }
}

pub(super) struct Parser {
    tokens: Vec<Token>,
    position: usize,
    depth: usize,
}

impl Parser {
    fn current(&self) -> &Token {
        self.tokens.get(self.position).unwrap_or(&Token::End)
    }

    fn nested<T>(
        &mut self,
        parse: impl FnOnce(&mut Parser) -> Result<T, String>,
    ) -> Result<T, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("expression is nested too deeply".to_string());
        }
        let parsed = parse(self);
        self.depth -= 1;
        parsed
    }

    fn expression(&mut self) -> Result<Expr, String> {
        self.chain(Chain::Sum, Parser::term)
    }

    fn term(&mut self) -> Result<Expr, String> {
        self.chain(Chain::Product, Parser::power)
    }

    /// `operand`s joined by `kind`'s operators. A fresh chain per call: `(a + b) + c` keeps
    /// `(a + b)` as one operand.
    fn chain(
        &mut self,
        kind: Chain,
        operand: fn(&mut Parser) -> Result<Expr, String>,
    ) -> Result<Expr, String> {
        let (plain, inverse) = kind.operators();
        let mut left = operand(self)?;
        let mut chained = false;
        while let Token::Operator(op) = *self.current() {
            if op != plain && op != inverse {
                break;
            }
            self.position += 1;
            let mut right = operand(self)?;
            if op == inverse {
                right = kind.inverse(right);
            }
            left = if chained {
                kind.append(left, right)
            } else {
                kind.of(vec![left, right])
            };
            chained = true;
        }
        Ok(left)
    }

    fn power(&mut self) -> Result<Expr, String> {
        let base = self.unary()?;
        if *self.current() == Token::Operator('^') {
            self.position += 1;
            let exponent = self.nested(Parser::power)?;
            return Ok(Expr::Pow(Box::new(base), Box::new(exponent)));
        }
        Ok(base)
    }

    fn unary(&mut self) -> Result<Expr, String> {
        match *self.current() {
            Token::Operator('+') => {
                self.position += 1;
                self.nested(Parser::unary)
            }
            Token::Operator('-') => {
                self.position += 1;
                Ok(negate(self.nested(Parser::unary)?))
            }
            _ => self.primary(),
        }
    }

    fn primary(&mut self) -> Result<Expr, String> {
        let token = self.current().clone();
        match token {
            Token::Number(value) => {
                self.position += 1;
                Ok(Expr::Number(value))
            }
            Token::Identifier(name) => {
                self.position += 1;
                if *self.current() != Token::Open {
                    return Ok(Expr::Symbol(name));
                }
                self.position += 1;
                let argument = self.nested(Parser::expression)?;
                if *self.current() != Token::Close {
                    return Err(format!("expected closing parenthesis after {name}"));
                }
                self.position += 1;
                if name != "sqrt" {
                    return Err(format!("unsupported function {}", go_quote(&name)));
                }
                let half = BigRational::new(BigInt::from(1), BigInt::from(2));
                Ok(Expr::Pow(Box::new(argument), Box::new(Expr::Number(half))))
            }
            Token::Open => {
                self.position += 1;
                let inner = self.nested(Parser::expression)?;
                if *self.current() != Token::Close {
                    return Err("expected closing parenthesis".to_string());
                }
                self.position += 1;
                Ok(inner)
            }
            other => Err(format!("unexpected token {}", go_quote(&other.text()))),
        }
    }
}

pub(super) fn parse(text: &str) -> Result<Expr, String> {
    let mut parser = Parser {
        tokens: tokenize(text)?,
        position: 0,
        depth: 0,
    };
    let ast = parser.expression()?;
    match parser.current() {
        Token::End => Ok(ast),
        other => Err(format!("unexpected token {}", go_quote(&other.text()))),
    }
}
