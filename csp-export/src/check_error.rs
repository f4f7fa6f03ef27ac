//! Why the checker could not decide an assertion: shared by the exploration and the transition
//! system it builds.
//!
//! Takes nothing; gives [`CheckError`], one variant per reason, each printed as one lowercase line.

use std::fmt;

use crate::typecheck::TypeError;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckError {
    /// The assertion does not type-check against the environment.
    Type(TypeError),
    /// A process that unfolds into itself before any event (`P = P [] a -> P`).
    UnguardedRecursion { process: String },
    /// A prefix that makes, or a synchronisation or hiding set that holds, a value that is no
    /// event of any channel.
    NotAnEvent { value: String },
    /// A value in `{| |}` that does not start with a channel.
    NotAChannel { value: String },
    /// The channels' fields give more events than the checker enumerates.
    TooManyEvents { count: usize, limit: usize },
    /// A name the type checker should have rejected.
    Unresolved { name: String },
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::Type(e) => write!(f, "{e}"),
            CheckError::UnguardedRecursion { process } => write!(
                f,
                "`{process}` calls itself before performing any event (unguarded recursion)"
            ),
            CheckError::NotAnEvent { value } => write!(f, "`{value}` is not an event"),
            CheckError::NotAChannel { value } => {
                write!(f, "`{value}` in `{{| |}}` does not start with a channel")
            }
            CheckError::TooManyEvents { count, limit } => write!(
                f,
                "the channels declare {count} events; the checker enumerates at most {limit}"
            ),
            CheckError::Unresolved { name } => {
                write!(f, "internal error: `{name}` is not resolved")
            }
        }
    }
}

impl std::error::Error for CheckError {}
