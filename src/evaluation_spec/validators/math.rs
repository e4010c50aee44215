//! math_equivalence: LaTeX-ish normalisation, a small recursive-descent grammar, exact
//! rational canonical forms compared by key (no like-term collection), and an f64 fallback with a
//! tolerance.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use serde::Deserialize;
use serde_json::json;
use unicode_general_category::{get_general_category, GeneralCategory};

use super::config::{check_strict, RawConfig};
use super::text::{evidence, go_quote};
use super::{Comparison, ConfigProblem};
use crate::evaluation_spec::gostr::go_g;
use crate::scoring::normalize::collapse_whitespace;

/// Deeper nesting than this (parentheses, unary signs, powers) is refused, not recursed into.
const MAX_DEPTH: usize = 200;
/// Decimal exponents beyond this are refused (exact rationals would grow without bound).
const MAX_EXPONENT: i64 = 10_000;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MathConfig {
    extract_answer: Option<bool>,
    answer_delimiter: Option<String>,
    comparison_mode: Option<String>,
    numeric_fallback: Option<bool>,
    tolerance: Option<f64>,
}

pub(super) fn check(config: RawConfig<'_>) -> Vec<ConfigProblem> {
    check_strict::<MathConfig>(config, |config, problems| {
        if !matches!(
            config.comparison_mode.as_deref(),
            None | Some("symbolic" | "numeric")
        ) {
            problems.add(".comparison_mode", "must be \"symbolic\" or \"numeric\"");
        }
        if config.tolerance.is_some_and(|tolerance| tolerance < 0.0) {
            problems.add(".tolerance", "must be greater than or equal to 0");
        }
    })
}

// ---- normalisation --------------------------------------------------------------------------

/// Replacements applied one after another over the whole text, in this order (so `,` is gone
/// before `\,` is looked for, as in the reference).
const REPLACEMENTS: &[(&str, &str)] = &[
    ("\r\n", "\n"),
    ("\n", " "),
    (",", ""),
    ("−", "-"),
    ("–", "-"),
    ("×", "*"),
    ("·", "*"),
    ("÷", "/"),
    ("\\left", ""),
    ("\\right", ""),
    ("\\cdot", "*"),
    ("\\times", "*"),
    ("\\!", ""),
    ("\\,", ""),
    ("\\;", ""),
    ("\\:", ""),
];

/// Strip outer `$$…$$` / `$…$` pairs.
fn strip_dollars(text: &str) -> &str {
    let mut current = text.trim();
    loop {
        let inner = if current.len() >= 4 && current.starts_with("$$") && current.ends_with("$$") {
            &current[2..current.len() - 2]
        } else if current.len() >= 2 && current.starts_with('$') && current.ends_with('$') {
            &current[1..current.len() - 1]
        } else {
            return current;
        };
        current = inner.trim();
    }
}

/// The index of the first non-space byte at or after `start`.
fn skip_spaces(text: &str, start: usize) -> usize {
    let bytes = text.as_bytes();
    let mut index = start;
    while index < bytes.len()
        && matches!(
            bytes[index],
            b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r'
        )
    {
        index += 1;
    }
    index
}

/// The balanced `open … close` group starting at byte `start`: (content, end after `close`).
fn balanced_group(text: &str, start: usize, open: u8, close: u8) -> Result<(&str, usize), String> {
    let bytes = text.as_bytes();
    if bytes.get(start) != Some(&open) {
        return Err(format!("expected '{}' at offset {start}", open as char));
    }
    let mut depth = 0usize;
    for (index, byte) in bytes.iter().enumerate().skip(start) {
        if *byte == open {
            depth += 1;
        } else if *byte == close {
            depth -= 1;
            if depth == 0 {
                return Ok((&text[start + 1..index], index + 1));
            }
        }
    }
    Err(format!(
        "unbalanced '{}' '{}' group",
        open as char, close as char
    ))
}

/// A brace group after optional spaces, or `missing` when there is no `{`.
fn required_braces<'a>(
    text: &'a str,
    start: usize,
    missing: &str,
) -> Result<(&'a str, usize), String> {
    let open = skip_spaces(text, start);
    if text.as_bytes().get(open) != Some(&b'{') {
        return Err(missing.to_string());
    }
    balanced_group(text, open, b'{', b'}')
}

/// Rewrite every occurrence of `command`, leftmost first, until none is left.
fn rewrite_command(
    text: String,
    command: &str,
    rewrite: impl Fn(&str, usize) -> Result<(String, usize), String>,
) -> Result<String, String> {
    let mut current = text;
    while let Some(position) = current.find(command) {
        let (replacement, end) = rewrite(&current, position + command.len())?;
        current = format!("{}{}{}", &current[..position], replacement, &current[end..]);
    }
    Ok(current)
}

/// The Unicode `√`: before `(`, `{` or nothing it becomes `sqrt`; otherwise it wraps the run of
/// characters up to white space or one of `+-*/^(){}`.
fn rewrite_radical(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    while let Some(position) = rest.find('√') {
        out.push_str(&rest[..position]);
        let after = &rest[position + '√'.len_utf8()..];
        let trimmed = after.trim_start();
        let run_end = trimmed
            .find(|ch: char| ch.is_whitespace() || "+-*/^(){}".contains(ch))
            .unwrap_or(trimmed.len());
        if trimmed.starts_with(['(', '{']) || run_end == 0 {
            out.push_str("sqrt");
            rest = after;
        } else {
            out.push_str(&format!("sqrt({})", &trimmed[..run_end]));
            rest = &trimmed[run_end..];
        }
    }
    out.push_str(rest);
    out
}

fn normalize_expression(text: &str, config: &MathConfig) -> Result<String, String> {
    let mut current = text.trim();
    if config.extract_answer == Some(true) {
        let delimiter = config
            .answer_delimiter
            .as_deref()
            .map(str::trim)
            .filter(|delimiter| !delimiter.is_empty())
            .unwrap_or("####");
        if let Some(position) = current.rfind(delimiter) {
            current = &current[position + delimiter.len()..];
        }
        current = current.trim();
    }
    let mut replaced = strip_dollars(current).to_string();
    for (from, to) in REPLACEMENTS {
        if replaced.contains(from) {
            replaced = replaced.replace(from, to);
        }
    }
    let boxed = rewrite_command(replaced.trim().to_string(), "\\boxed", |text, after| {
        let (inner, end) = required_braces(text, after, "\\boxed must be followed by braces")?;
        Ok((format!("({inner})"), end))
    })?;
    let fractions = rewrite_command(boxed, "\\frac", |text, after| {
        let (numerator, middle) =
            required_braces(text, after, "\\frac must have a numerator group")?;
        let (denominator, end) =
            required_braces(text, middle, "\\frac must have a denominator group")?;
        Ok((format!("(({numerator})/({denominator}))"), end))
    })?;
    let roots = rewrite_command(fractions, "\\sqrt", |text, after| {
        let mut position = skip_spaces(text, after);
        let mut degree = "";
        if text.as_bytes().get(position) == Some(&b'[') {
            let (index, end) = balanced_group(text, position, b'[', b']')?;
            degree = index;
            position = end;
        }
        let (radicand, end) = required_braces(text, position, "\\sqrt must have a radicand group")?;
        if degree.trim().is_empty() {
            Ok((format!("sqrt({radicand})"), end))
        } else {
            Ok((format!("((({radicand})^(1/({degree}))))"), end))
        }
    })?;
    let braces = rewrite_radical(&roots).replace('{', "(").replace('}', ")");
    let normalized = collapse_whitespace(&braces).trim().to_string();
    if normalized.is_empty() {
        return Err("expression is empty".to_string());
    }
    Ok(normalized)
}

// ---- grammar --------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
enum Token {
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
enum Expr {
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
enum Chain {
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

struct Parser {
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

fn parse(text: &str) -> Result<Expr, String> {
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

// ---- canonical form -------------------------------------------------------------------------

impl Expr {
    fn key(&self) -> String {
        match self {
            Expr::Number(value) if value.is_integer() => format!("num:{}", value.numer()),
            Expr::Number(value) => format!("num:{}/{}", value.numer(), value.denom()),
            Expr::Symbol(name) => format!("sym:{name}"),
            Expr::Add(items) => format!("add({})", keys(items)),
            Expr::Mul(items) => format!("mul({})", keys(items)),
            Expr::Pow(base, exponent) => format!("pow({},{})", base.key(), exponent.key()),
        }
    }
}

fn keys(items: &[Expr]) -> String {
    items.iter().map(Expr::key).collect::<Vec<_>>().join(",")
}

/// Sorted by key (keys computed once).
fn sorted(items: Vec<Expr>) -> Vec<Expr> {
    let mut keyed: Vec<(String, Expr)> = items.into_iter().map(|item| (item.key(), item)).collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    keyed.into_iter().map(|(_, item)| item).collect()
}

/// One binary `add` node of canonical operands: an operand that is itself a sum is spliced in
/// (its constant is *not* re-folded, as in the reference), numbers are folded, 0 dropped.
fn add_pair(left: Expr, right: Expr) -> Expr {
    let (terms, numbers) = operands([left, right], |operand| match operand {
        Expr::Add(inner) => Ok(inner),
        other => Err(other),
    });
    assembled(terms, numbers.into_iter().sum(), Zero::is_zero, Expr::Add)
}

/// One binary `mul` node: products spliced in, numbers folded, a zero constant wins, 1 dropped.
fn multiply_pair(left: Expr, right: Expr) -> Expr {
    let (factors, numbers) = operands([left, right], |operand| match operand {
        Expr::Mul(inner) => Ok(inner),
        other => Err(other),
    });
    let constant: BigRational = numbers.into_iter().product();
    if constant.is_zero() {
        return Expr::Number(constant);
    }
    assembled(factors, constant, One::is_one, Expr::Mul)
}

/// The items of a binary node's operands, the items of an operand of the node's own kind
/// (`splice`) spliced in, and its numbers apart.
fn operands(
    pair: [Expr; 2],
    splice: fn(Expr) -> Result<Vec<Expr>, Expr>,
) -> (Vec<Expr>, Vec<BigRational>) {
    let mut items = Vec::new();
    let mut numbers = Vec::new();
    for operand in pair {
        match splice(operand) {
            Ok(inner) => items.extend(inner),
            Err(Expr::Number(value)) => numbers.push(value),
            Err(other) => items.push(other),
        }
    }
    (items, numbers)
}

/// A node of `items` and their folded `constant` (left out when `identity` says it changes
/// nothing, unless it is all there is), sorted; a single item stands alone.
fn assembled(
    mut items: Vec<Expr>,
    constant: BigRational,
    identity: fn(&BigRational) -> bool,
    node: fn(Vec<Expr>) -> Expr,
) -> Expr {
    if !identity(&constant) || items.is_empty() {
        items.push(Expr::Number(constant));
    }
    let mut items = sorted(items);
    if items.len() == 1 {
        return items.remove(0);
    }
    node(items)
}

fn power(base: Expr, exponent: Expr) -> Result<Expr, String> {
    if let Expr::Number(value) = &exponent {
        if value.is_zero() {
            return Ok(Expr::Number(BigRational::one()));
        }
        if value.is_one() {
            return Ok(base);
        }
        if let (Expr::Number(base_value), true) = (&base, value.is_integer()) {
            let small = value.numer().abs() <= BigInt::from(32)
                && base_value.numer().bits() <= 256
                && base_value.denom().bits() <= 256;
            if small {
                let exponent = value.numer().to_i32().unwrap_or(0);
                if base_value.is_zero() && exponent < 0 {
                    return Err("division by zero".to_string());
                }
                return Ok(Expr::Number(base_value.pow(exponent)));
            }
        }
    }
    Ok(Expr::Pow(Box::new(base), Box::new(exponent)))
}

/// The canonical form; a literal division by zero (`0^-1`) has none.
fn canonical(ast: &Expr) -> Result<Expr, String> {
    Ok(match ast {
        Expr::Number(value) => Expr::Number(value.clone()),
        Expr::Symbol(name) => Expr::Symbol(name.clone()),
        Expr::Add(items) | Expr::Mul(items) => {
            let pair = if matches!(ast, Expr::Add(_)) {
                add_pair
            } else {
                multiply_pair
            };
            let mut operands = items.iter();
            let first = operands.next().map(canonical).transpose()?;
            let mut folded = first.ok_or("empty chain")?;
            for operand in operands {
                folded = pair(folded, canonical(operand)?);
            }
            folded
        }
        Expr::Pow(base, exponent) => power(canonical(base)?, canonical(exponent)?)?,
    })
}

fn evaluate(ast: &Expr) -> Result<f64, String> {
    Ok(match ast {
        Expr::Number(value) => value.to_f64().unwrap_or(f64::NAN),
        Expr::Symbol(name) => return Err(format!("symbol {} is not numeric", go_quote(name))),
        Expr::Add(items) => {
            let mut total = 0.0;
            for item in items {
                total += evaluate(item)?;
            }
            total
        }
        Expr::Mul(items) => {
            let mut total = 1.0;
            for item in items {
                total *= evaluate(item)?;
            }
            total
        }
        Expr::Pow(base, exponent) => evaluate(base)?.powf(evaluate(exponent)?),
    })
}

// ---- decision -------------------------------------------------------------------------------

pub(super) fn math_equivalence(config: &MathConfig, actual: &str, expected: &str) -> Comparison {
    let comparison_mode = config.comparison_mode.as_deref().unwrap_or("symbolic");
    if comparison_mode != "symbolic" && comparison_mode != "numeric" {
        return Comparison::error(
            "parse math_equivalence config: comparison_mode must be \"symbolic\" or \"numeric\""
                .to_string(),
        );
    }
    let numeric_mode = comparison_mode == "numeric";
    let fallback = numeric_mode || config.numeric_fallback.unwrap_or(true);
    let tolerance = config.tolerance.unwrap_or(1e-6);
    let normalized_actual = match normalize_expression(actual, config) {
        Ok(text) => text,
        Err(err) => {
            return Comparison::error(format!("normalize actual math expression: {err}"))
                .with_evidence(evidence([("actual_raw", json!(actual))]))
        }
    };
    let normalized_expected = match normalize_expression(expected, config) {
        Ok(text) => text,
        Err(err) => {
            return Comparison::error(format!("normalize expected math expression: {err}"))
                .with_evidence(evidence([("expected_raw", json!(expected))]))
        }
    };
    let mut recorded = evidence([
        ("actual_raw", json!(actual)),
        ("expected_raw", json!(expected)),
        ("normalized_actual", json!(normalized_actual)),
        ("normalized_expected", json!(normalized_expected)),
        ("comparison_mode", json!(comparison_mode)),
        (
            "extract_answer",
            json!(config.extract_answer.unwrap_or(false)),
        ),
        ("answer_delimiter", json!(config.answer_delimiter)),
        ("numeric_fallback", json!(fallback)),
        ("tolerance", json!(tolerance)),
    ]);
    let mut record = |key: &'static str, value: serde_json::Value| {
        recorded.insert(key, value);
    };
    let actual_ast = parse(&normalized_actual);
    let expected_ast = parse(&normalized_expected);
    let mut verdict: Option<Comparison> = None;
    if let (false, Ok(actual_ast), Ok(expected_ast)) = (numeric_mode, &actual_ast, &expected_ast) {
        // A literal division by zero has no canonical form: it is never symbolically equal.
        if let (Ok(a), Ok(e)) = (canonical(actual_ast), canonical(expected_ast)) {
            let (actual_key, expected_key) = (a.key(), e.key());
            let equal = actual_key == expected_key;
            record("canonical_actual", json!(actual_key));
            record("canonical_expected", json!(expected_key));
            if equal {
                record("mode_used", json!("symbolic"));
                verdict = Some(Comparison::binary(true, ""));
            }
        }
    }
    let parse_errors: Vec<String> = [&actual_ast, &expected_ast]
        .into_iter()
        .filter_map(|parsed| parsed.as_ref().err().cloned())
        .collect();
    if let Err(err) = &actual_ast {
        record("actual_parse_error", json!(err));
    }
    if let Err(err) = &expected_ast {
        record("expected_parse_error", json!(err));
    }
    if verdict.is_none() && fallback {
        let evaluated =
            |parsed: &Result<Expr, String>| parsed.clone().and_then(|ast| evaluate(&ast));
        match (evaluated(&actual_ast), evaluated(&expected_ast)) {
            (Ok(a), Ok(e)) => {
                let difference = (a - e).abs();
                record("numeric_actual", json!(a));
                record("numeric_expected", json!(e));
                record("absolute_difference", json!(difference));
                let mode = if numeric_mode {
                    "numeric"
                } else {
                    "numeric_fallback"
                };
                record("mode_used", json!(mode));
                verdict = Some(Comparison::binary(
                    difference <= tolerance,
                    &format!(
                        "numeric values differ by {} which exceeds tolerance {}",
                        go_g(difference, Some(10)),
                        go_g(tolerance, Some(10))
                    ),
                ));
            }
            (a, e) => {
                if let Err(err) = &a {
                    record("actual_numeric_error", json!(err));
                }
                if let Err(err) = &e {
                    record("expected_numeric_error", json!(err));
                }
                if numeric_mode || !parse_errors.is_empty() {
                    let all: Vec<String> = parse_errors
                        .iter()
                        .cloned()
                        .chain([a.err(), e.err()].into_iter().flatten())
                        .collect();
                    return Comparison::error(format!(
                        "evaluate math_equivalence expressions: {}",
                        all.join("; ")
                    ))
                    .with_evidence(recorded);
                }
            }
        }
    }
    let verdict = match verdict {
        Some(verdict) => verdict,
        None if !parse_errors.is_empty() => {
            return Comparison::error(format!(
                "parse math_equivalence expressions: {}",
                parse_errors.join("; ")
            ))
            .with_evidence(recorded)
        }
        None => Comparison::binary(false, "symbolic forms are not equivalent"),
    };
    verdict.with_evidence(recorded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluation_spec::validators::Verdict;

    fn verdict(actual: &str, expected: &str) -> Comparison {
        math_equivalence(&MathConfig::default(), actual, expected)
    }

    #[test]
    fn normalisation_examples() {
        let config = MathConfig::default();
        let normalized = |text: &str| normalize_expression(text, &config).unwrap_or_default();
        assert_eq!(normalized("√2"), "sqrt(2)");
        assert_eq!(normalized("$$\\frac{1}{2}$$"), "((1)/(2))");
        assert_eq!(normalized("\\sqrt[3]{8}"), "(((8)^(1/(3))))");
        assert_eq!(normalized("1,000 \\cdot 2"), "1000 * 2");
        assert!(normalize_expression("\\boxed 4", &config).is_err());
    }

    #[test]
    fn no_like_term_collection_and_no_implicit_products() {
        let outcome = verdict("x - x", "0");
        assert_eq!(outcome.verdict(), Verdict::Fail);
        let outcome = verdict("2x", "2*x");
        outcome
            .assert_error(|reason| reason.starts_with("evaluate math_equivalence expressions: "));
    }

    #[test]
    fn canonical_forms_follow_the_reference_tree_shape() {
        // A spliced sum keeps its own constant apart, as the reference's canonicaliser does.
        assert_eq!(verdict("x + 1 + 2", "x + 3").verdict(), Verdict::Fail);
        assert_eq!(verdict("x + (1 + 2)", "x + 3").verdict(), Verdict::Pass);
        assert_eq!(verdict("2 * x / 4", "x * 0.5").verdict(), Verdict::Fail);
        assert_eq!(verdict("x * (2 / 4)", "x * 0.5").verdict(), Verdict::Pass);
        // `,` is removed before `\,` is looked for, so a thin space leaves a backslash behind.
        let outcome = verdict("1\\,000", "1000");
        outcome.assert_error(|reason| reason.contains("unexpected character '\\'"));
    }

    #[test]
    fn division_by_zero_is_not_equivalent_and_never_panics() {
        assert_ne!(verdict("1/0", "1/0").verdict(), Verdict::Pass);
        assert_ne!(verdict("0^-1", "2").verdict(), Verdict::Pass);
    }

    #[test]
    fn deep_nesting_is_refused() {
        let deep = "(".repeat(10_000) + "1" + &")".repeat(10_000);
        let outcome = verdict(&deep, "1");
        outcome.assert_error(|reason| reason.contains("nested too deeply"));
        let long = vec!["1"; 20_000].join("+");
        assert_eq!(verdict(&long, "20000").verdict(), Verdict::Pass);
    }

    #[test]
    fn numeric_fallback_fails_with_the_difference() {
        let outcome = verdict("41", "42");
        assert_eq!(outcome.verdict(), Verdict::Fail);
        assert_eq!(
            outcome.reason(),
            "numeric values differ by 1 which exceeds tolerance 1e-06"
        );
    }
}
