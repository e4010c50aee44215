//! The shape of one check object (FEP 5.1's Check schema): a known `type`, an `arguments`
//! object, a semver `version`; other members are ignored. A failure here is a problem of the
//! whole request.

use std::sync::{Arc, LazyLock};

use regex::Regex;
use serde_json::{Map, Value};

use super::catalog::Catalog;
use super::custom::CustomCheck;
use super::standard::{CheckKind, CHECK_VERSION};
use super::trust::Declarations;
use crate::input::strict;
use crate::input::strict::JsonProblem as Problem;

/// The keys of a check object that FEP's Check schema lists, the two required ones first. Any
/// other member is allowed, and ignored.
const CHECK_KEYS: [&str; 3] = ["type", "arguments", "version"];

/// A check object whose shape is valid: a known type and an arguments object.
#[derive(Debug, Clone)]
pub struct CheckDef<'a> {
    /// The check type.
    pub kind: CheckKind,
    /// The declaration, for a custom type.
    pub custom: Option<Arc<CustomCheck>>,
    /// The raw arguments.
    pub arguments: &'a Map<String, Value>,
    /// The members the Check schema allows that evalctl does not know (ignored).
    pub ignored: Vec<&'a str>,
    /// The requested `version`, if any: a semantic version (whether evalctl implements it is
    /// for [`Check::prepare`](super::Check::prepare) to say).
    pub version: Option<&'a str>,
}

/// Validate the shape of one check object; `catalog` knows the custom types, and whether a
/// document may declare more.
pub fn parse_check<'a>(value: &'a Value, catalog: &Catalog) -> Result<CheckDef<'a>, Vec<Problem>> {
    let custom = &catalog.custom;
    let object = strict::as_object(value).map_err(|reason| vec![Problem::new("", reason)])?;
    let mut problems: Vec<Problem> = strict::missing_keys(object, &CHECK_KEYS[..2])
        .map(|(_, reason)| Problem::new("", reason))
        .collect();
    let kind = object
        .get("type")
        .and_then(|kind| match strict::as_str(kind) {
            Ok(name) => {
                let kind = CheckKind::from_name(name)
                    .map(|kind| (kind, None))
                    .or_else(|| {
                        custom
                            .get(name)
                            .map(|check| (CheckKind::Custom, Some(Arc::clone(check))))
                    });
                if kind.is_none() {
                    let known: Vec<&str> = CheckKind::ALL
                        .iter()
                        .map(|kind| kind.name())
                        .chain(
                            custom
                                .values()
                                .filter(|check| check.is_declared())
                                .map(|check| check.name.as_str()),
                        )
                        .collect();
                    let every = CheckKind::ALL
                        .iter()
                        .map(|kind| kind.name())
                        .chain(custom.keys().map(String::as_str));
                    let declared = match catalog.declarations {
                        Declarations::AllowedByName(_) => {
                            "is declared in `custom_checks` or with --custom-check"
                        }
                        Declarations::Refused => "is one this server declares with --custom-check",
                    };
                    let hint = strict::hint(
                        name,
                        every,
                        &format!(
                            "known: {}; spec.TYPE runs an evaluation-spec validator; a custom \
                             type {declared}",
                            known.join(", ")
                        ),
                    );
                    problems.push(Problem::new(
                        ".type",
                        format!(
                            "unknown check type `{}` {hint}",
                            crate::text::clip(name, crate::text::ECHOED)
                        ),
                    ));
                }
                kind
            }
            Err(reason) => {
                problems.push(Problem::new(".type", reason));
                None
            }
        });
    let arguments =
        object
            .get("arguments")
            .and_then(|arguments| match strict::as_object(arguments) {
                Ok(arguments) => Some(arguments),
                Err(reason) => {
                    problems.push(Problem::new(".arguments", reason));
                    None
                }
            });
    let version = object
        .get("version")
        .and_then(|version| match semantic_version(version) {
            Ok(version) => Some(version),
            Err(reason) => {
                problems.push(Problem::new(".version", reason));
                None
            }
        });
    match (kind, arguments) {
        (Some((kind, custom)), Some(arguments)) if problems.is_empty() => Ok(CheckDef {
            kind,
            custom,
            arguments,
            ignored: object
                .keys()
                .map(String::as_str)
                .filter(|key| !CHECK_KEYS.contains(key))
                .collect(),
            version,
        }),
        _ => Err(problems),
    }
}

/// `version` as a semantic version (the pattern of FEP 5.1's Check schema), or why it is not one.
fn semantic_version(version: &Value) -> Result<&str, String> {
    static SEMVER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$",
        )
        .expect("the semver pattern is valid")
    });
    let Some(text) = version.as_str() else {
        return Err(strict::wrong_type("a semantic version string", version));
    };
    if !SEMVER.is_match(text) {
        return Err(format!(
            "`{}` is not a semantic version (MAJOR.MINOR.PATCH)",
            crate::text::clip(text, crate::text::ECHOED)
        ));
    }
    Ok(text)
}

/// Why a requested semantic `version` cannot be honoured: a major version other than the one
/// implemented.
pub(super) fn unavailable_version(version: &str) -> Option<String> {
    let implemented = CHECK_VERSION.split('.').next().unwrap_or_default();
    (version.split('.').next() != Some(implemented)).then(|| {
        format!(
            "`{}` is not available: evalctl implements {CHECK_VERSION} (any {implemented}.x.y is \
             accepted)",
            crate::text::clip(version, crate::text::ECHOED)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shape_problems_are_all_reported() {
        let problems = parse_check(
            &json!({"type": "fuzzy", "args": {}, "version": "1.x"}),
            &Catalog::default(),
        )
        .unwrap_err();
        let at: Vec<&str> = problems.iter().map(|p| p.at.as_str()).collect();
        assert_eq!(at, ["", ".type", ".version"]);
        assert_eq!(problems[0].reason, "missing required key `arguments`");
        assert!(problems[1].reason.contains("unknown check type `fuzzy`"));
        assert_eq!(
            problems[2].reason,
            "`1.x` is not a semantic version (MAJOR.MINOR.PATCH)"
        );
    }
    #[test]
    fn versions_must_be_semver_of_the_implemented_major() {
        assert_eq!(
            semantic_version(&json!("1.2.3-rc.1+b5")),
            Ok("1.2.3-rc.1+b5")
        );
        assert_eq!(unavailable_version("1.2.3-rc.1+b5"), None);
        assert!(unavailable_version("2.0.0")
            .unwrap()
            .contains("not available"));
        assert!(semantic_version(&json!("01.0.0"))
            .unwrap_err()
            .contains("not a semantic"));
        assert!(semantic_version(&json!(1))
            .unwrap_err()
            .contains("expected a semantic version string, found number"));
    }
}
