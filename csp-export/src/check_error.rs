//! Why the checker could not decide an assertion: shared by the exploration and the transition
//! system it builds.
//!
//! Takes nothing; gives [`CheckError`], one variant per reason, each printed as one lowercase line.

use crate::typecheck::TypeError;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// The assertion does not type-check against the environment.
    #[error("{0}")]
    Type(TypeError),
    /// A process that unfolds into itself before any event (`P = P [] a -> P`).
    #[error("`{process}` calls itself before performing any event (unguarded recursion)")]
    UnguardedRecursion { process: String },
    /// A prefix that makes, or a synchronisation or hiding set that holds, a value that is no
    /// event of any channel.
    #[error("`{value}` is not an event")]
    NotAnEvent { value: String },
    /// A value in `{| |}` that does not start with a channel.
    #[error("`{value}` in `{{| |}}` does not start with a channel")]
    NotAChannel { value: String },
    /// The channels' fields give more events than the checker enumerates.
    #[error("the channels declare {count} events; the checker enumerates at most {limit}")]
    TooManyEvents { count: usize, limit: usize },
    /// A name the type checker should have rejected.
    #[error("internal error: `{name}` is not resolved")]
    Unresolved { name: String },
}
