//! What the caller of the analysis chooses: bounds, and who decides the reorder model.
//!
//! Takes nothing; gives [`Options`] (candidates per variable and in all, fallback candidates per
//! race candidate, window size, state bound, whether to predict atomicity violations too, and of
//! which transactions) and the
//! [`Backend`]: the native solver ([`crate::solve`]) or a CSP [`Checker`] on the exported CSP_M
//! model ([`crate::csp::solve`]).

use std::collections::BTreeSet;
use std::path::PathBuf;

use ilgen_trace::sites::Deciding;
use ilgen_trace::SiteId;

#[derive(Clone, Debug)]
pub struct Options {
    /// Findings per variable (and deadlocks in all), unless `all_sites`.
    pub max_per_var: usize,
    /// One finding per distinct pair of source sites, without a count bound.
    pub all_sites: bool,
    /// Sync events per window of the exhaustive search.
    pub window: usize,
    /// States the exhaustive search may visit for one variable (or for deadlocks), over all its
    /// windows, before it gives up.
    pub max_states: usize,
    /// Who decides: the native search, or a CSP checker on the exported model.
    pub backend: Backend,
    /// Sites of deciding reads (the binary's site table flags them): the native solver keeps
    /// what they saw ([`crate::reads_from`]). Empty: no such edges. The CSP back end does not
    /// encode these edges; it decides the model without them.
    pub deciding: Deciding,
    /// Also predict atomicity violations of the marked transactions ([`crate::atomicity`]).
    pub atomicity: bool,
    /// Which recorded blocks and calls are the transactions; `None`: every marked block (the
    /// default [`Transactions`]).
    pub transactions: Option<Transactions>,
    /// Candidates kept, the first in the output order; the rest are only counted
    /// ([`crate::Stats::not_written`]), so that memory and the file stay bounded.
    pub max_candidates: usize,
    /// Per race candidate, up to this many other witnessed pairs at its two sites kept as
    /// fallback candidates ([`crate::solve::Fallback`]): replay tries them in turn when the
    /// candidate's own schedule does not confirm it. They do not count toward `max_per_var`.
    pub fallbacks: usize,
}

/// The transactions `--atomicity` checks ([`crate::atomicity`]), by the sites of their
/// `tx_begin`s. The default: every atomic block the program marked, and no call.
#[derive(Clone, Debug, Default)]
pub struct Transactions {
    /// The sites of the markers that begin and end the calls a run recorded (`calls=1`), which
    /// are no block the program marked: each a call's entry or one of its returns.
    pub calls: BTreeSet<SiteId>,
    /// `ilgen detect --atomic GLOB`: the begin sites (of marked blocks and of calls) whose
    /// function matches. A chosen block or call is a transaction unless it runs inside another
    /// one, and a thread's outermost call (its start routine, `main`) never is: the calls it
    /// makes are. `None`: every marked block.
    pub selected: Option<BTreeSet<SiteId>>,
}

#[derive(Clone, Debug)]
pub enum Backend {
    Native,
    Csp(Checker),
}

impl Options {
    pub(crate) fn want(&self) -> usize {
        if self.all_sites {
            usize::MAX
        } else {
            self.max_per_var
        }
    }
}

/// Which checker decides the assertions.
#[derive(Clone, Debug)]
pub enum Checker {
    /// ilgen's own explicit-state checker (`ilgen-csp`), bounded by `max_states`.
    Builtin { max_states: usize },
    /// FDR's `refines` binary; scripts are written under `dir` for the user to look at.
    Fdr { refines: PathBuf, dir: PathBuf },
}
