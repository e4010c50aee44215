//! Canonical forms: exact rational forms compared by key (no like-term collection), and the f64
//! value of an expression for the numeric fallback.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

use super::grammar::Expr;
use crate::evaluation_spec::validators::text::go_quote;

impl Expr {
    pub(super) fn key(&self) -> String {
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
pub(super) fn canonical(ast: &Expr) -> Result<Expr, String> {
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

pub(super) fn evaluate(ast: &Expr) -> Result<f64, String> {
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
