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

/// The kind of a chain (`a + b + c`, `a * b * c`), folded pair by pair from the left as the
/// reference does: each binary node splices in the items of an operand of its own kind (its
/// constant is *not* re-folded), folds the numbers among its two operands and drops an identity
/// constant; a product with a zero constant is that zero.
#[derive(Clone, Copy)]
enum Chain {
    Sum,
    Product,
}

/// A chain folded so far: one expression, or the items of a node of the chain's kind (two or
/// more), in no order. Only the order of the finished node is seen, so the items are sorted
/// once at the end, not at every pair: a chain of n operands costs n log n, not n².
enum Folded {
    One(Expr),
    Node(Vec<Expr>),
}

impl Chain {
    /// The items of `operand` when it is a node of this chain's kind.
    fn splice(self, operand: Expr) -> Result<Vec<Expr>, Expr> {
        match (self, operand) {
            (Chain::Sum, Expr::Add(items)) | (Chain::Product, Expr::Mul(items)) => Ok(items),
            (_, other) => Err(other),
        }
    }

    /// One binary node of `left` (the chain so far) and the canonical `right`.
    fn pair(self, left: Folded, right: Expr) -> Folded {
        let mut numbers = Vec::new();
        let mut operand = |operand: Result<Vec<Expr>, Expr>, items: &mut Vec<Expr>| match operand {
            Ok(inner) => items.extend(inner),
            Err(Expr::Number(value)) => numbers.push(value),
            Err(other) => items.push(other),
        };
        // The chain's items so far are grown in place, never copied.
        let mut items = Vec::new();
        match left {
            Folded::Node(inner) => items = inner,
            Folded::One(expr) => operand(self.splice(expr), &mut items),
        }
        operand(self.splice(right), &mut items);
        let (constant, identity): (BigRational, bool) = match self {
            Chain::Sum => {
                let sum: BigRational = numbers.into_iter().sum();
                let zero = sum.is_zero();
                (sum, zero)
            }
            Chain::Product => {
                let product: BigRational = numbers.into_iter().product();
                if product.is_zero() {
                    return Folded::One(Expr::Number(product));
                }
                let one = product.is_one();
                (product, one)
            }
        };
        if !identity || items.is_empty() {
            items.push(Expr::Number(constant));
        }
        match items.len() {
            1 => Folded::One(items.remove(0)),
            _ => Folded::Node(items),
        }
    }

    /// The finished chain: a node's items sorted by key.
    fn finish(self, folded: Folded) -> Expr {
        match (self, folded) {
            (_, Folded::One(expr)) => expr,
            (Chain::Sum, Folded::Node(items)) => Expr::Add(sorted(items)),
            (Chain::Product, Folded::Node(items)) => Expr::Mul(sorted(items)),
        }
    }
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
            let chain = if matches!(ast, Expr::Add(_)) {
                Chain::Sum
            } else {
                Chain::Product
            };
            let mut operands = items.iter();
            let first = operands.next().map(canonical).transpose()?;
            let mut folded = Folded::One(first.ok_or("empty chain")?);
            for operand in operands {
                folded = chain.pair(folded, canonical(operand)?);
            }
            chain.finish(folded)
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
