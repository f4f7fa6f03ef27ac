//! Runtime options: the `ILGEN_OPTIONS` environment variable, parsed from one table.
//!
//! Takes the variable's text, TSan style: `key=value` pairs separated by `:` or white space
//! (so a value cannot contain either); gives [`Options`]. [`TABLE`] is the only place an option is
//! named: it generates the defaults ([`Options::default`] applies every default through the
//! table), the parser and the `help=1` text.
//!
//! Bad input does not stop the program: a runtime linked into someone's program must not change
//! its exit status over a typo. An unknown key or a bad value gets one message on stderr naming
//! `ILGEN_OPTIONS` and the key, that key keeps its default, and every other key still applies.

use std::fmt::Write as _;

/// What the runtime does in this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Record the trace (the default).
    Record,
    /// Do nothing: every hook returns at once and every wrapper only calls the real function.
    Off,
    /// Enforce the schedule file `schedule` and detect races and deadlocks online (no trace is
    /// written; the outcome goes to `replay-outcome.json`).
    Replay,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Empty: `./ilgen-out/<binary basename>-<pid>`. `%p` is replaced by the process id.
    pub trace_dir: String,
    pub mode: Mode,
    pub verbosity: u32,
    /// Ranges a thread's segment cache holds before it writes them out early.
    pub segment_cache: u32,
    /// Growth step of each thread file's mapping, in KiB.
    pub chunk_kb: u32,
    /// Flush the other threads at exit by `membarrier` handshake (falling back to signals when the
    /// kernel refuses it) or always by signal.
    pub flush_by_signal: bool,
    /// Real-time signal that asks a thread to flush its segment cache at exit or fatal signal.
    pub flush_signal: i32,
    /// How long the thread that ends the process waits for the others' flush acknowledgements.
    pub flush_timeout_ms: u32,
    /// Install handlers for SIGSEGV, SIGBUS, SIGABRT, SIGINT and SIGTERM.
    pub handle_signals: bool,
    /// At `exit()`/`quick_exit()`/`_exit()`/`_Exit()`/the return from `main`, how long the other threads may run on to
    /// their next blocking operation or their end (0: not at all).
    pub exit_grace_ms: u32,
    /// Print the option table on stderr at start-up.
    pub help: bool,
    /// Replay: the schedule file to enforce.
    pub schedule: String,
    /// Replay: where `replay-outcome.json` goes; empty means `trace_dir`, else the schedule's
    /// directory.
    pub outcome_dir: String,
    /// Replay: how long the schedule may make no progress before the replay is called diverged.
    pub replay_timeout_ms: u32,
    /// Replay: how long every live thread must stay blocked in program sync operations before
    /// the replay reports a deadlock.
    pub deadlock_ms: u32,
    /// Replay: once a race is confirmed, the program is stopped when it completes no sync
    /// operation for this long; 0 never stops it (a debugger session).
    pub verdict_grace_ms: u32,
    /// Replay: (site, recorded tid) of an access at which `replay::debug` calls its stop hook.
    pub stop_at: Option<(u32, u32)>,
    /// Record: schedule perturbation seed (`record::chaos`); 0 is off.
    pub chaos: u64,
    /// Record: PCT's bug depth d: each thread's priority drops at d - 1 of its operations.
    pub chaos_depth: u32,
    /// Record: the longest delay before a sync operation of an undropped thread, in µs.
    pub chaos_delay_us: u32,
    /// Record: sync operations per thread that are perturbed (the rest run undelayed).
    pub chaos_ops: u32,
    /// Record the calls of functions that may synchronize (`crate::calls`); replay: the run did.
    pub calls: bool,
}

/// One option: its key, default (as the user would write it), help line and setter.
pub struct OptionSpec {
    pub name: &'static str,
    pub default: &'static str,
    pub help: &'static str,
    pub set: fn(&mut Options, &str) -> Result<(), String>,
}

/// Every option, in the order `help=1` prints them.
pub const TABLE: &[OptionSpec] = &[
    OptionSpec {
        name: "trace_dir",
        default: "",
        help: "trace directory, created with its parents; empty means \
               ./ilgen-out/<binary>-<pid>; %p is replaced by the pid",
        set: |o, v| {
            o.trace_dir = v.to_owned();
            Ok(())
        },
    },
    OptionSpec {
        name: "mode",
        default: "record",
        help: "record: write the trace; off: run the program untouched; replay: enforce the \
               schedule file `schedule` and report races and deadlocks (exit 86 diverged, \
               87 deadlock, 88 schedule refused, 89 stopped after a race)",
        set: |o, v| {
            o.mode = match v {
                "record" => Mode::Record,
                "off" => Mode::Off,
                "replay" => Mode::Replay,
                _ => return Err("expected record, off or replay".into()),
            };
            Ok(())
        },
    },
    OptionSpec {
        name: "verbosity",
        default: "0",
        help: "0: errors only; 1: also the trace directory at start and exit; 2: also flushes",
        set: |o, v| {
            o.verbosity = parse_num(v, 0, 2)?;
            Ok(())
        },
    },
    OptionSpec {
        name: "segment_cache",
        default: "4096",
        help: "distinct ranges a thread keeps per segment before writing them out early",
        set: |o, v| {
            o.segment_cache = parse_num(v, 16, 1 << 22)?;
            Ok(())
        },
    },
    OptionSpec {
        name: "chunk_kb",
        default: "1024",
        help: "each thread file grows by this many KiB (zero-filled)",
        set: |o, v| {
            o.chunk_kb = parse_num(v, 4, 1 << 20)?;
            Ok(())
        },
    },
    OptionSpec {
        name: "flush_by",
        default: "membarrier",
        help: "how exit flushes other threads: membarrier (no signal; falls back to signal when \
               the kernel refuses it) or signal",
        set: |o, v| {
            o.flush_by_signal = match v {
                "membarrier" => false,
                "signal" => true,
                _ => return Err("expected membarrier or signal".into()),
            };
            Ok(())
        },
    },
    OptionSpec {
        name: "flush_signal",
        default: "62",
        help: "real-time signal (34..=64) that asks other threads to flush at exit, \
               used only by the signal method",
        set: |o, v| {
            o.flush_signal = parse_num(v, 34, 64)? as i32;
            Ok(())
        },
    },
    OptionSpec {
        name: "flush_timeout_ms",
        default: "500",
        help: "how long exit waits for the other threads' flushes",
        set: |o, v| {
            o.flush_timeout_ms = parse_num(v, 0, 60_000)?;
            Ok(())
        },
    },
    OptionSpec {
        name: "handle_signals",
        default: "1",
        help: "flush the trace on SIGSEGV, SIGBUS, SIGABRT, SIGINT, SIGTERM (then re-raise)",
        set: |o, v| {
            o.handle_signals = parse_bool(v)?;
            Ok(())
        },
    },
    OptionSpec {
        name: "exit_grace_ms",
        default: "200",
        help: "at exit(), quick_exit(), _exit(), _Exit() or main's return, the other threads may \
               run this long (less when all of them are blocked or ended) so what they do is \
               recorded (replay: after the exit's turn); 0: off",
        set: |o, v| {
            o.exit_grace_ms = parse_num(v, 0, 60_000)?;
            Ok(())
        },
    },
    OptionSpec {
        name: "schedule",
        default: "",
        help: "replay: path of the schedule file (ilgen detect writes them)",
        set: |o, v| {
            o.schedule = v.to_owned();
            Ok(())
        },
    },
    OptionSpec {
        name: "outcome_dir",
        default: "",
        help: "replay: directory of replay-outcome.json; empty means trace_dir, or the \
               schedule's directory when trace_dir is empty too",
        set: |o, v| {
            o.outcome_dir = v.to_owned();
            Ok(())
        },
    },
    OptionSpec {
        name: "replay_timeout_ms",
        default: "2000",
        help: "replay, last resort: the schedule is diverged when its next step is not taken \
               for this long (the threads' state decides sooner when it can)",
        set: |o, v| {
            o.replay_timeout_ms = parse_num(v, 10, 3_600_000)?;
            Ok(())
        },
    },
    OptionSpec {
        name: "deadlock_ms",
        default: "300",
        help: "replay, last resort: a deadlock is reported when every live thread stays blocked \
               in a program sync operation for this long (at once when the state proves it)",
        set: |o, v| {
            o.deadlock_ms = parse_num(v, 10, 3_600_000)?;
            Ok(())
        },
    },
    OptionSpec {
        name: "verdict_grace_ms",
        // Longer than a second: servers run timers once a second (memcached's clock handler,
        // whose tick is main's only sync operation while idle), and a race still to come (main's
        // read of `stop_main_loop` after the next tick) must not be cut off by the first.
        default: "3000",
        help: "replay: once a race is confirmed or the replay left its schedule (either on \
               disk), the program is stopped when it completes no sync operation for this long \
               (exit 89); 0: never",
        set: |o, v| {
            o.verdict_grace_ms = parse_num(v, 0, 3_600_000)?;
            Ok(())
        },
    },
    OptionSpec {
        name: "chaos",
        default: "0",
        help: "record: perturb the schedule with this seed (PCT-style priorities and delays at \
               thread start and sync operations; the same seed makes the same decisions); 0: off",
        set: |o, v| {
            o.chaos = v
                .parse()
                .map_err(|_| "expected a seed, 0 to 2^64-1".to_owned())?;
            Ok(())
        },
    },
    OptionSpec {
        name: "chaos_depth",
        default: "3",
        help: "record, with chaos: bug depth d; each thread's priority drops at d-1 random points",
        set: |o, v| {
            o.chaos_depth = parse_num(v, 1, 64)?;
            Ok(())
        },
    },
    OptionSpec {
        name: "chaos_delay_us",
        default: "1000",
        help: "record, with chaos: longest delay (µs) before a sync operation of a thread whose \
               priority has not dropped; each drop adds as much again",
        set: |o, v| {
            o.chaos_delay_us = parse_num(v, 0, 1_000_000)?;
            Ok(())
        },
    },
    OptionSpec {
        name: "chaos_ops",
        default: "100",
        help: "record, with chaos: how many sync operations of each thread are perturbed",
        set: |o, v| {
            o.chaos_ops = parse_num(v, 1, 1 << 30)?;
            Ok(())
        },
    },
    OptionSpec {
        name: "calls",
        default: "0",
        help: "record each call of a function that may synchronize in which a sync operation \
               runs (its begin and end), so that `ilgen detect --atomic GLOB` can make any such \
               function a transaction; replay: set by ilgen when the run recorded them",
        set: |o, v| {
            o.calls = parse_bool(v)?;
            Ok(())
        },
    },
    OptionSpec {
        name: "stop_at",
        default: "",
        help: "replay: SITE,TID calls __ilgen_stop_hook before thread TID's access at site SITE \
               (a debugger's breakpoint; `ilgen replay --stop-at first` sets it)",
        set: |o, v| {
            o.stop_at = match v.split_once(',') {
                None if v.is_empty() => None,
                Some((site, tid)) => Some((
                    parse_num(site, 0, u32::MAX)?,
                    parse_num(tid, 0, u32::MAX - 1)?,
                )),
                None => return Err("expected SITE,TID or nothing".into()),
            };
            Ok(())
        },
    },
    OptionSpec {
        name: "suppressions",
        default: "",
        help: "read by `ilgen detect` and `ilgen replay`, not by the runtime: a file of \
               ThreadSanitizer-style suppressions (race:PATTERN, deadlock:PATTERN)",
        // Known here so that one ILGEN_OPTIONS can serve the program and ilgen without a warning.
        set: |_, _| Ok(()),
    },
    OptionSpec {
        name: "help",
        default: "0",
        help: "print this table on stderr",
        set: |o, v| {
            o.help = parse_bool(v)?;
            Ok(())
        },
    },
];

fn parse_num(v: &str, min: u32, max: u32) -> Result<u32, String> {
    match v.parse::<u32>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(format!("expected a number in {min}..={max}")),
    }
}

fn parse_bool(v: &str) -> Result<bool, String> {
    match v {
        "1" | "true" | "yes" => Ok(true),
        "0" | "false" | "no" => Ok(false),
        _ => Err("expected 0 or 1".into()),
    }
}

impl Default for Options {
    fn default() -> Self {
        let mut o = Options {
            trace_dir: String::new(),
            mode: Mode::Record,
            verbosity: 0,
            segment_cache: 0,
            chunk_kb: 0,
            flush_by_signal: false,
            flush_signal: 0,
            flush_timeout_ms: 0,
            handle_signals: false,
            exit_grace_ms: 0,
            help: false,
            schedule: String::new(),
            outcome_dir: String::new(),
            replay_timeout_ms: 0,
            deadlock_ms: 0,
            verdict_grace_ms: 0,
            stop_at: None,
            chaos: 0,
            chaos_depth: 0,
            chaos_delay_us: 0,
            chaos_ops: 0,
            calls: false,
        };
        for spec in TABLE {
            // The table's defaults are valid by construction (a unit test checks it).
            let _ = (spec.set)(&mut o, spec.default);
        }
        o
    }
}

impl Options {
    /// Parses `text`; returns the options and one message per rejected key.
    pub fn parse(text: &str) -> (Options, Vec<String>) {
        let mut o = Options::default();
        let mut errors = Vec::new();
        for item in text.split(|c: char| c == ':' || c.is_whitespace()) {
            if item.is_empty() {
                continue;
            }
            let Some((key, value)) = item.split_once('=') else {
                errors.push(format!(
                    "ILGEN_OPTIONS: '{item}' is not key=value; ignored (try help=1)"
                ));
                continue;
            };
            match TABLE.iter().find(|s| s.name == key) {
                None => errors.push(format!(
                    "ILGEN_OPTIONS: unknown option '{key}'; ignored (known: {})",
                    TABLE.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
                )),
                Some(spec) => {
                    if let Err(why) = (spec.set)(&mut o, value) {
                        errors.push(format!(
                            "ILGEN_OPTIONS: bad value '{value}' for '{key}': {why}; \
                             using the default '{}'",
                            spec.default
                        ));
                        // A failed setter may have left nothing half-set, but be sure.
                        let _ = (spec.set)(&mut o, spec.default);
                    }
                }
            }
        }
        (o, errors)
    }

    /// The help text, generated from [`TABLE`].
    pub fn help_text() -> String {
        let mut out = String::from("ilgen runtime options (ILGEN_OPTIONS=key=value:key=value):\n");
        for s in TABLE {
            let _ = writeln!(out, "  {:<17} default '{}': {}", s.name, s.default, s.help);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_come_from_the_table_and_are_valid() {
        let mut o = Options::default();
        for spec in TABLE {
            assert!((spec.set)(&mut o, spec.default).is_ok(), "{}", spec.name);
        }
        let d = Options::default();
        assert_eq!(d.mode, Mode::Record);
        assert_eq!(d.trace_dir, "");
        assert_eq!(d.segment_cache, 4096);
        assert_eq!(d.flush_signal, 62);
        assert!(d.handle_signals);
        assert_eq!(d.exit_grace_ms, 200);
        assert_eq!(Options::parse("exit_grace_ms=0").0.exit_grace_ms, 0);
    }

    #[test]
    fn colon_and_space_separated_pairs() {
        let (o, errs) = Options::parse("trace_dir=/tmp/x mode=off:verbosity=2\n  chunk_kb=64");
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(o.trace_dir, "/tmp/x");
        assert_eq!(o.mode, Mode::Off);
        assert_eq!(o.verbosity, 2);
        assert_eq!(o.chunk_kb, 64);
    }

    #[test]
    fn bad_keys_and_values_are_named_and_keep_defaults() {
        let (o, errs) = Options::parse("bogus=1:verbosity=9:mode=replayy:segment_cache=32:x");
        assert_eq!(errs.len(), 4, "{errs:?}");
        assert!(errs.iter().all(|e| e.starts_with("ILGEN_OPTIONS: ")));
        assert!(errs[0].contains("'bogus'"));
        assert!(errs[1].contains("'verbosity'"));
        assert!(errs[2].contains("'mode'"));
        assert_eq!(o.verbosity, 0);
        assert_eq!(o.mode, Mode::Record);
        assert_eq!(o.segment_cache, 32, "good keys still apply");
    }

    #[test]
    fn replay_options() {
        let (o, errs) =
            Options::parse("mode=replay:schedule=/tmp/s.json:replay_timeout_ms=500:deadlock_ms=50");
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(o.mode, Mode::Replay);
        assert_eq!(o.schedule, "/tmp/s.json");
        assert_eq!(o.replay_timeout_ms, 500);
        assert_eq!(o.deadlock_ms, 50);
        assert_eq!(Options::default().replay_timeout_ms, 2000);
    }

    #[test]
    fn stop_at_is_a_site_and_a_thread() {
        assert_eq!(Options::default().stop_at, None);
        let (o, errs) = Options::parse("mode=replay:stop_at=12,3");
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(o.stop_at, Some((12, 3)));
        let (o, errs) = Options::parse("stop_at=12");
        assert_eq!(o.stop_at, None);
        assert!(errs[0].contains("expected SITE,TID"), "{errs:?}");
    }

    #[test]
    fn help_lists_every_option() {
        let h = Options::help_text();
        for s in TABLE {
            assert!(h.contains(s.name));
        }
    }
}
