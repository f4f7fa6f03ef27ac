//! The `ilgen` command's allocator ([`ilgen_trace::memory`]): memory running out ends the process
//! with the message and status set for it, not an abort; inside `fallibly` a failed reservation
//! is returned to its caller instead.
//!
//! Takes this test binary, which installs the allocator, run again as a child under an address
//! space limit; gives the child's exit status and stderr.

use std::process::Command;

use ilgen_trace::memory::{fallibly, on_exhaustion, ExitOnExhaustion};

#[global_allocator]
static ALLOCATOR: ExitOnExhaustion = ExitOnExhaustion;

/// Set in the child: it limits itself and runs out of memory.
const CHILD: &str = "ILGEN_EXHAUSTION_CHILD";
const MESSAGE: &str = "ilgen: error: out of memory while analysing T; lower --window";

fn run_out_of_memory() {
    let limit = libc::rlimit {
        rlim_cur: 1 << 30,
        rlim_max: 1 << 30,
    };
    // SAFETY: setting this process's own limit from a local.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) }, 0);
    on_exhaustion(MESSAGE, 2);
    let mut reserved: Vec<u8> = Vec::new();
    assert!(fallibly(|| reserved.try_reserve_exact(2 << 30)).is_err());
    let zeroed = vec![0u8; 2 << 30];
    println!("allocated {} bytes past the limit", zeroed.len());
}

#[test]
fn exhaustion_exits_with_the_message_and_fallible_reservations_fail_softly() {
    if std::env::var_os(CHILD).is_some() {
        run_out_of_memory();
        return;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "exhaustion_exits_with_the_message_and_fallible_reservations_fail_softly",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr, format!("{MESSAGE}\n"));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("allocated"));
}
