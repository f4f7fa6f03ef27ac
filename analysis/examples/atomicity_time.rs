//! The atomicity analysis alone, timed: what `benchmarks/atomicity/scaling.py` reports as its
//! cost at each trace size.
//!
//! Takes a trace directory (`atomicity_time DIR`); prepares its model as `ilgen detect` does, then
//! runs [`atomicity::predict`] (phase I, phase II and the schedules) on the marked transactions
//! with the default window; prints one line, `TRANSACTIONS PREDICTED CPU_SECONDS`, the last the
//! CPU time (user + system) the prediction took on its thread, which does not count what the
//! machine's other work takes, as the difference of two whole detects does. Exit status 2 on a
//! trace it cannot read.

use std::path::Path;

use ilgen_analysis::{atomicity, prepare, window};
use ilgen_trace::format::TraceDir;

/// The calling thread's CPU time so far, in clock ticks (`/proc/thread-self/stat`, fields 14 and
/// 15: user and system).
fn thread_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let (utime, stime) = (fields.get(11)?, fields.get(12)?);
    Some(utime.parse::<u64>().ok()? + stime.parse::<u64>().ok()?)
}

/// Linux's `USER_HZ`, the unit of those fields, on every architecture it runs ilgen on.
const TICKS_PER_SECOND: f64 = 100.0;

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: atomicity_time TRACE_DIR");
        std::process::exit(2);
    };
    let trace = TraceDir::open(Path::new(&dir)).unwrap_or_else(|e| {
        eprintln!("atomicity_time: {e}");
        std::process::exit(2);
    });
    let program = prepare::prepare(trace.threads);
    let before = thread_ticks();
    let (predictions, counts) =
        atomicity::predict(&program, window::DEFAULT_SIZE, &Default::default());
    let cpu = match (before, thread_ticks()) {
        (Some(b), Some(a)) => (a - b) as f64 / TICKS_PER_SECOND,
        _ => f64::NAN,
    };
    println!("{} {} {cpu:.2}", counts.transactions, predictions.len());
}
