//! Go formats the reference's reason texts use besides `%g` (`gostr::go_g`): `%.4f` and `%v` of
//! a string slice, so reasons match the reference byte for byte.

use crate::evaluation_spec::gostr::non_finite;

/// Go's `%.4f`.
pub(super) fn go_f4(value: f64) -> String {
    non_finite(value).unwrap_or_else(|| format!("{value:.4}"))
}

/// Go's `%v` of a string slice: `[a b c]`.
pub(super) fn go_list<S: std::borrow::Borrow<str>>(items: &[S]) -> String {
    format!("[{}]", items.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_and_lists() {
        assert_eq!(go_f4(0.4), "0.4000");
        assert_eq!(go_list(&["a", "b"]), "[a b]");
    }
}
