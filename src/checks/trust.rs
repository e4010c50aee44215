//! The trust policy of checks: what the command line of a local command lends to the checks of
//! a request or checks file (custom check types, the commands they may declare, the endpoints
//! they may call), and what becomes of the commands a document declares.

use super::custom::CustomCheck;
use super::extended::AllowedEndpoint;

/// What becomes of the commands a request or checks file declares in `custom_checks`: a file
/// is not the user, so a command it names runs only with the user's say-so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Declarations {
    /// A local command (`fep evaluate`, `run --checks`): declarations are read, and a declared
    /// command runs only when the command line allows it by name (`--allow-custom-check NAME`,
    /// the names here).
    AllowedByName(Vec<String>),
    /// Refused outright, a problem of the request (`evalctl serve`: a client must not make the
    /// server run commands of its choosing).
    Refused,
}

impl Default for Declarations {
    /// A local command that allows no declared command.
    fn default() -> Self {
        Declarations::AllowedByName(Vec::new())
    }
}

/// What the command line of a local command lends to the checks of a request or checks file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trust {
    /// `--custom-check NAME=COMMAND`: custom check types the user declares.
    pub custom: Vec<CustomCheck>,
    /// `--allow-custom-check NAME`: the commands a request or checks file may declare.
    pub commands: Vec<String>,
    /// `--allow-endpoint [KEY_ENV@]BASE_URL`: the endpoints (and keys) a request or checks file
    /// may name in a `provider_config`.
    pub endpoints: Vec<AllowedEndpoint>,
}
