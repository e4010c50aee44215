//! math_equivalence (§2.3): LaTeX-ish normalisation, a small recursive-descent grammar, exact
//! rational canonical forms compared by key (no like-term collection), and an f64 fallback with a
//! tolerance.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use serde::Deserialize;
use serde_json::json;

use super::config::{check_strict, RawConfig};
use super::gofmt::go_g;
use super::text::{collapse_whitespace, evidence, go_quote};
use super::{Comparison, ConfigProblem};

/// Deeper nesting than this (parentheses, unary signs, powers) is refused, not recursed into.
const MAX_DEPTH: usize = 200;
/// Decimal exponents beyond this are refused (exact rationals would grow without bound).
const MAX_EXPONENT: i64 = 400;

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

/// Single-pass replacements (at each position the first pair that matches wins).
const REPLACEMENTS: &[(&str, &str)] = &[
    ("\r\n", " "),
    ("\n", " "),
    (",", ""),
    ("−", "-"),
    ("–", "-"),
    ("×", "*"),
    ("·", "*"),
    ("÷", "/"),
    ("\\left", ""),
    ("\\right", ""),
    ("\\!", ""),
    ("\\,", ""),
    ("\\;", ""),
    ("\\:", ""),
    ("\\cdot", "*"),
    ("\\times", "*"),
];

fn replace_all(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'scan: while let Some(ch) = rest.chars().next() {
        for (from, to) in REPLACEMENTS {
            if let Some(after) = rest.strip_prefix(from) {
                out.push_str(to);
                rest = after;
                continue 'scan;
            }
        }
        out.push(ch);
        rest = &rest[ch.len_utf8()..];
    }
    out
}

/// Strip outer `$$…$$` / `$…$` pairs.
fn strip_dollars(text: &str) -> &str {
    let mut current = text.trim();
    loop {
        let inner = current
            .strip_prefix("$$")
            .and_then(|rest| rest.strip_suffix("$$"))
            .or_else(|| {
                current
                    .strip_prefix('$')
                    .and_then(|rest| rest.strip_suffix('$'))
            });
        match inner {
            Some(inner) if current.len() >= 2 => current = inner.trim(),
            _ => return current,
        }
    }
}

/// The brace group starting at byte `start` (after optional spaces): (content, end after `}`).
fn brace_group(text: &str, start: usize) -> Option<(&str, usize)> {
    let offset = text[start..].len() - text[start..].trim_start().len();
    let open = start + offset;
    if !text[open..].starts_with('{') {
        return None;
    }
    let mut depth = 0usize;
    for (index, ch) in text[open..].char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some((&text[open + 1..open + index], open + index + 1));
                }
            }
            _ => {}
        }
    }
    None
}

/// Rewrite every `command` occurrence with `rewrite(text, after_command) -> (replacement, end)`.
fn rewrite_command(
    text: &str,
    command: &str,
    rewrite: impl Fn(&str, usize) -> Result<(String, usize), String>,
) -> Result<String, String> {
    let mut current = text.to_string();
    while let Some(position) = current.find(command) {
        let (replacement, end) = rewrite(&current, position + command.len())?;
        current = format!("{}{}{}", &current[..position], replacement, &current[end..]);
    }
    Ok(current)
}

/// The Unicode `√`: before `(`/`{` or nothing it is `sqrt`; otherwise it wraps the following run.
fn rewrite_radical(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    while let Some(position) = rest.find('√') {
        out.push_str(&rest[..position]);
        let after = &rest[position + '√'.len_utf8()..];
        let trimmed = after.trim_start();
        if trimmed.is_empty() || trimmed.starts_with(['(', '{']) {
            out.push_str("sqrt");
            rest = after;
            continue;
        }
        let run_end = trimmed
            .find(|ch: char| ch.is_whitespace() || "+-*/^(){}".contains(ch))
            .unwrap_or(trimmed.len());
        out.push_str(&format!("sqrt({})", &trimmed[..run_end]));
        rest = &trimmed[run_end..];
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
            current = current[position + delimiter.len()..].trim();
        }
    }
    let replaced = replace_all(strip_dollars(current));
    let boxed = rewrite_command(replaced.trim(), "\\boxed", |text, after| {
        brace_group(text, after)
            .map(|(inner, end)| (format!("({inner})"), end))
            .ok_or_else(|| "\\boxed must be followed by braces".to_string())
    })?;
    let fractions = rewrite_command(&boxed, "\\frac", |text, after| {
        let (numerator, middle) = brace_group(text, after)
            .ok_or_else(|| "\\frac must have a numerator group".to_string())?;
        let (denominator, end) = brace_group(text, middle)
            .ok_or_else(|| "\\frac must have a denominator group".to_string())?;
        Ok((format!("(({numerator})/({denominator}))"), end))
    })?;
    let roots = rewrite_command(&fractions, "\\sqrt", |text, after| {
        let rest = &text[after..];
        if let Some(index_text) = rest.trim_start().strip_prefix('[') {
            let close = index_text
                .find(']')
                .ok_or_else(|| "\\sqrt index must be closed by ]".to_string())?;
            let index_end = text.len() - index_text.len() + close + 1;
            let (radicand, end) = brace_group(text, index_end)
                .ok_or_else(|| "\\sqrt must have a radicand group".to_string())?;
            let degree = &index_text[..close];
            return Ok((format!("((({radicand})^(1/({degree}))))"), end));
        }
        brace_group(text, after)
            .map(|(inner, end)| (format!("sqrt({inner})"), end))
            .ok_or_else(|| "\\sqrt must have a radicand group".to_string())
    })?;
    let radicals = rewrite_radical(&roots);
    let braces: String = radicals
        .chars()
        .map(|ch| match ch {
            '{' => '(',
            '}' => ')',
            other => other,
        })
        .collect();
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
    Operator(char),
}

impl Token {
    /// The token as written (numbers in lowest terms).
    fn text(&self) -> String {
        match self {
            Token::Number(value) => value.to_string(),
            Token::Identifier(name) => name.clone(),
            Token::Operator(op) => op.to_string(),
        }
    }
}

fn ten_to(power: i64) -> BigInt {
    num_traits::pow(BigInt::from(10), power.unsigned_abs() as usize)
}

fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut index = 0;
    while index < chars.len() {
        let ch = chars[index];
        if ch.is_whitespace() {
            index += 1;
        } else if ch.is_ascii_digit() || ch == '.' {
            let start = index;
            let mut seen_point = false;
            while index < chars.len() && (chars[index].is_ascii_digit() || chars[index] == '.') {
                if chars[index] == '.' {
                    if seen_point {
                        return Err(format!("malformed number at position {index}"));
                    }
                    seen_point = true;
                }
                index += 1;
            }
            let mantissa: String = chars[start..index].iter().collect();
            let mut exponent: i64 = 0;
            if index < chars.len() && matches!(chars[index], 'e' | 'E') {
                let mut cursor = index + 1;
                if cursor < chars.len() && matches!(chars[cursor], '+' | '-') {
                    cursor += 1;
                }
                let digits_start = cursor;
                while cursor < chars.len() && chars[cursor].is_ascii_digit() {
                    cursor += 1;
                }
                if cursor > digits_start {
                    let text: String = chars[index + 1..cursor].iter().collect();
                    exponent = text
                        .parse::<i64>()
                        .ok()
                        .filter(|exponent| exponent.abs() <= MAX_EXPONENT)
                        .ok_or_else(|| {
                            format!("number exponent out of range at position {index}")
                        })?;
                    index = cursor;
                }
            }
            let (whole, fraction) = mantissa.split_once('.').unwrap_or((&mantissa, ""));
            if whole.is_empty() && fraction.is_empty() {
                return Err(format!("malformed number at position {start}"));
            }
            let digits: BigInt = format!("{whole}{fraction}")
                .parse()
                .map_err(|_| format!("malformed number at position {start}"))?;
            let scale = exponent - fraction.len() as i64;
            let mut value = if scale >= 0 {
                BigRational::from_integer(digits * ten_to(scale))
            } else {
                BigRational::new(digits, ten_to(scale))
            };
            if index < chars.len() && chars[index] == '%' {
                value /= BigRational::from_integer(BigInt::from(100));
                index += 1;
            }
            tokens.push(Token::Number(value));
        } else if ch.is_alphabetic() || ch == '_' {
            let start = index;
            while index < chars.len() && (chars[index].is_alphanumeric() || chars[index] == '_') {
                index += 1;
            }
            tokens.push(Token::Identifier(chars[start..index].iter().collect()));
        } else if "+-*/^()".contains(ch) {
            tokens.push(Token::Operator(ch));
            index += 1;
        } else {
            return Err(format!("unexpected character '{ch}'"));
        }
    }
    Ok(tokens)
}

/// The parse tree; sums and products are n-ary so long chains do not nest.
#[derive(Debug, Clone)]
enum Ast {
    Number(BigRational),
    Symbol(String),
    Sum(Vec<(bool, Ast)>),     // (negated, term)
    Product(Vec<(bool, Ast)>), // (divided, factor)
    Power(Box<Ast>, Box<Ast>),
    Negate(Box<Ast>),
    Sqrt(Box<Ast>),
}

struct Parser {
    tokens: Vec<Token>,
    position: usize,
    depth: usize,
}

impl Parser {
    fn peek_operator(&self) -> Option<char> {
        match self.tokens.get(self.position) {
            Some(Token::Operator(op)) => Some(*op),
            _ => None,
        }
    }

    fn descend(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("expression is nested too deeply".to_string());
        }
        Ok(())
    }

    fn expression(&mut self) -> Result<Ast, String> {
        let mut terms = vec![(false, self.term()?)];
        while let Some(op @ ('+' | '-')) = self.peek_operator() {
            self.position += 1;
            terms.push((op == '-', self.term()?));
        }
        Ok(if terms.len() == 1 {
            terms.remove(0).1
        } else {
            Ast::Sum(terms)
        })
    }

    fn term(&mut self) -> Result<Ast, String> {
        let mut factors = vec![(false, self.power()?)];
        while let Some(op @ ('*' | '/')) = self.peek_operator() {
            self.position += 1;
            factors.push((op == '/', self.power()?));
        }
        Ok(if factors.len() == 1 {
            factors.remove(0).1
        } else {
            Ast::Product(factors)
        })
    }

    fn power(&mut self) -> Result<Ast, String> {
        let base = self.unary()?;
        if self.peek_operator() == Some('^') {
            self.position += 1;
            self.descend()?;
            let exponent = self.power()?;
            self.depth -= 1;
            return Ok(Ast::Power(Box::new(base), Box::new(exponent)));
        }
        Ok(base)
    }

    fn unary(&mut self) -> Result<Ast, String> {
        match self.peek_operator() {
            Some(op @ ('+' | '-')) => {
                self.position += 1;
                self.descend()?;
                let operand = self.unary()?;
                self.depth -= 1;
                Ok(if op == '-' {
                    Ast::Negate(Box::new(operand))
                } else {
                    operand
                })
            }
            _ => self.primary(),
        }
    }

    fn parenthesised(&mut self) -> Result<Ast, String> {
        self.descend()?;
        let inner = self.expression()?;
        self.depth -= 1;
        if self.peek_operator() != Some(')') {
            return Err("expected closing parenthesis".to_string());
        }
        self.position += 1;
        Ok(inner)
    }

    fn primary(&mut self) -> Result<Ast, String> {
        let token = self.tokens.get(self.position).cloned();
        self.position += 1;
        match token {
            Some(Token::Number(value)) => Ok(Ast::Number(value)),
            Some(Token::Identifier(name)) => {
                if self.peek_operator() != Some('(') {
                    return Ok(Ast::Symbol(name));
                }
                if name != "sqrt" {
                    return Err(format!("unsupported function {}", go_quote(&name)));
                }
                self.position += 1;
                Ok(Ast::Sqrt(Box::new(self.parenthesised()?)))
            }
            Some(Token::Operator('(')) => self.parenthesised(),
            Some(Token::Operator(op)) => {
                Err(format!("unexpected operator {}", go_quote(&op.to_string())))
            }
            None => Err("unexpected end of expression".to_string()),
        }
    }
}

fn parse(text: &str) -> Result<Ast, String> {
    let mut parser = Parser {
        tokens: tokenize(text)?,
        position: 0,
        depth: 0,
    };
    let ast = parser.expression()?;
    match parser.tokens.get(parser.position) {
        None => Ok(ast),
        Some(token) => Err(format!("unexpected token {}", go_quote(&token.text()))),
    }
}

// ---- canonical form -------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
enum Expr {
    Number(BigRational),
    Symbol(String),
    Add(Vec<Expr>),
    Mul(Vec<Expr>),
    Pow(Box<Expr>, Box<Expr>),
}

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

fn number(value: i64) -> Expr {
    Expr::Number(BigRational::from_integer(BigInt::from(value)))
}

/// Sorted by key (keys computed once).
fn sorted(items: Vec<Expr>) -> Vec<Expr> {
    let mut keyed: Vec<(String, Expr)> = items.into_iter().map(|item| (item.key(), item)).collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    keyed.into_iter().map(|(_, item)| item).collect()
}

fn add(items: Vec<Expr>) -> Expr {
    let mut constant = BigRational::zero();
    let mut rest = Vec::new();
    for item in items {
        match item {
            Expr::Number(value) => constant += value,
            Expr::Add(inner) => {
                for part in inner {
                    match part {
                        Expr::Number(value) => constant += value,
                        other => rest.push(other),
                    }
                }
            }
            other => rest.push(other),
        }
    }
    if !constant.is_zero() || rest.is_empty() {
        rest.push(Expr::Number(constant));
    }
    if rest.len() == 1 {
        return rest.remove(0);
    }
    Expr::Add(sorted(rest))
}

fn multiply(items: Vec<Expr>) -> Expr {
    let mut constant = BigRational::one();
    let mut rest = Vec::new();
    for item in items {
        match item {
            Expr::Number(value) => constant *= value,
            Expr::Mul(inner) => {
                for part in inner {
                    match part {
                        Expr::Number(value) => constant *= value,
                        other => rest.push(other),
                    }
                }
            }
            other => rest.push(other),
        }
    }
    if constant.is_zero() {
        return Expr::Number(constant);
    }
    if !constant.is_one() || rest.is_empty() {
        rest.push(Expr::Number(constant));
    }
    if rest.len() == 1 {
        return rest.remove(0);
    }
    Expr::Mul(sorted(rest))
}

fn power(base: Expr, exponent: Expr) -> Result<Expr, String> {
    if let Expr::Number(value) = &exponent {
        if value.is_zero() {
            return Ok(number(1));
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

fn reciprocal(value: Expr) -> Result<Expr, String> {
    match value {
        Expr::Number(value) if value.is_zero() => Err("division by zero".to_string()),
        Expr::Number(value) => Ok(Expr::Number(value.recip())),
        other => power(other, number(-1)),
    }
}

fn canonical(ast: &Ast) -> Result<Expr, String> {
    Ok(match ast {
        Ast::Number(value) => Expr::Number(value.clone()),
        Ast::Symbol(name) => Expr::Symbol(name.clone()),
        Ast::Negate(operand) => multiply(vec![number(-1), canonical(operand)?]),
        Ast::Sum(terms) => {
            let mut items = Vec::with_capacity(terms.len());
            for (negated, term) in terms {
                let term = canonical(term)?;
                items.push(if *negated {
                    multiply(vec![number(-1), term])
                } else {
                    term
                });
            }
            add(items)
        }
        Ast::Product(factors) => {
            let mut items = Vec::with_capacity(factors.len());
            for (divided, factor) in factors {
                let factor = canonical(factor)?;
                items.push(if *divided {
                    reciprocal(factor)?
                } else {
                    factor
                });
            }
            multiply(items)
        }
        Ast::Power(base, exponent) => power(canonical(base)?, canonical(exponent)?)?,
        Ast::Sqrt(operand) => power(
            canonical(operand)?,
            Expr::Number(BigRational::new(BigInt::from(1), BigInt::from(2))),
        )?,
    })
}

fn evaluate(ast: &Ast) -> Result<f64, String> {
    Ok(match ast {
        Ast::Number(value) => value.to_f64().unwrap_or(f64::NAN),
        Ast::Symbol(name) => return Err(format!("symbol {} has no numeric value", go_quote(name))),
        Ast::Negate(operand) => -evaluate(operand)?,
        Ast::Sum(terms) => {
            let mut total = 0.0;
            for (negated, term) in terms {
                let value = evaluate(term)?;
                total += if *negated { -value } else { value };
            }
            total
        }
        Ast::Product(factors) => {
            let mut total = 1.0;
            for (divided, factor) in factors {
                let value = evaluate(factor)?;
                total = if *divided {
                    total / value
                } else {
                    total * value
                };
            }
            total
        }
        Ast::Power(base, exponent) => evaluate(base)?.powf(evaluate(exponent)?),
        Ast::Sqrt(operand) => evaluate(operand)?.sqrt(),
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
    let mut record = |key: &str, value: serde_json::Value| {
        recorded.insert(key.to_string(), value);
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
            |parsed: &Result<Ast, String>| parsed.clone().and_then(|ast| evaluate(&ast));
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
    use crate::spec::validators::Verdict;

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
        assert_eq!(outcome.verdict, Verdict::Fail);
        let outcome = verdict("2x", "2*x");
        assert_eq!(outcome.verdict, Verdict::Error);
        assert!(outcome
            .reason
            .starts_with("evaluate math_equivalence expressions: "));
    }

    #[test]
    fn division_by_zero_is_not_equivalent_and_never_panics() {
        assert_ne!(verdict("1/0", "1/0").verdict, Verdict::Pass);
        assert_ne!(verdict("0^-1", "2").verdict, Verdict::Pass);
    }

    #[test]
    fn deep_nesting_is_refused() {
        let deep = "(".repeat(10_000) + "1" + &")".repeat(10_000);
        let outcome = verdict(&deep, "1");
        assert_eq!(outcome.verdict, Verdict::Error);
        assert!(outcome.reason.contains("nested too deeply"));
        let long = vec!["1"; 20_000].join("+");
        assert_eq!(verdict(&long, "20000").verdict, Verdict::Pass);
    }

    #[test]
    fn numeric_fallback_fails_with_the_difference() {
        let outcome = verdict("41", "42");
        assert_eq!(outcome.verdict, Verdict::Fail);
        assert_eq!(
            outcome.reason,
            "numeric values differ by 1 which exceeds tolerance 1e-06"
        );
    }
}
