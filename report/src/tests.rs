//! Tests of the report: takes hand-made candidates, replays and observed findings; checks how
//! they deduplicate into findings and what each renderer gives for them (snapshots).
//!
//! A file of its own, not a `mod tests` block in `lib.rs`: the renderers import the report's
//! types from `lib.rs`, and its tests call the renderers.

use ilgen_trace::replay::{
    HeldLock, NativeFrame, Outcome, RaceAccess, RaceReport, ResultKind, StackFrame, ThreadRef,
    OUTCOME_VERSION,
};
use ilgen_trace::AccessKind;

use crate::*;
use ilgen_analysis::candidates::{AccessSide, ObjectRange, ScheduleOut, Step};
use ilgen_confirm::run::Ended;

/// A race candidate at site 1 whose schedule ends with thread 1 locking 0x40 at site 2.
fn race_after_lock_at_site_2() -> Candidate {
    let mut c = candidate([1, 1]);
    let Candidate::Race { schedule, .. } = &mut c else {
        panic!("a race")
    };
    let mut steps: Vec<Step> = schedule.steps().collect();
    steps.push(Step {
        tid: 1,
        op: OpKind::Lock,
        object: Some(0x40),
        peer: None,
        site: Some(2),
        seq: Some(2),
        op_index: 1,
        timed_out: None,
    });
    *schedule = ScheduleOut::whole(0, steps);
    c
}

fn candidate(sites: [SiteId; 2]) -> Candidate {
    let side = |tid, site| AccessSide {
        tid,
        site,
        access: AccessName::Write,
    };
    Candidate::Race {
        object: ObjectRange { addr: 0x10, len: 4 },
        accesses: [side(0, sites[0]), side(1, sites[1])],
        schedule: ScheduleOut::whole(
            0,
            vec![
                Step {
                    tid: 0,
                    op: OpKind::Fork,
                    object: None,
                    peer: Some(1),
                    site: Some(9),
                    seq: Some(0),
                    op_index: 0,
                    timed_out: None,
                },
                // No instrumented instruction starts a thread: its location has no site.
                Step {
                    tid: 1,
                    op: OpKind::Start,
                    object: None,
                    peer: None,
                    site: None,
                    seq: Some(1),
                    op_index: 0,
                    timed_out: None,
                },
            ],
        ),
        fallback_of: None,
    }
}

fn run(result: ResultKind, races: &[(SiteId, SiteId)]) -> ReplayRun {
    let access = |tid, site| RaceAccess {
        thread: ThreadRef {
            tid,
            parent: Some(0),
            child_index: 0,
        },
        kind: AccessKind::Write,
        addr: 0x10,
        size: 4,
        site,
        free: false,
        unmap: false,
        destroy: false,
        stack: vec![],
        locks: vec![],
    };
    ReplayRun {
        pid: 42,
        ended: Ended::Exited(0),
        outcome: Ok(Outcome {
            format_version: OUTCOME_VERSION,
            build_id: "0".into(),
            schedule: "s".into(),
            load_base: 0,
            result,
            schedule_followed: true,
            steps_done: 1,
            steps_total: 1,
            races: races
                .iter()
                .map(|&(a, b)| RaceReport {
                    current: access(1, a),
                    previous: access(0, b),
                    heap_block: None,
                })
                .collect(),
            deadlock: None,
            divergence: None,
            watched: Vec::new(),
            created: Default::default(),
            step_stacks: Vec::new(),
            stacks: Vec::new(),
        }),
        out_dir: "/t/replay-1".into(),
    }
}

/// No binary; main created T1 at site 9.
fn context(unjoined: &[ThreadId]) -> Context<'static> {
    Context {
        binary: None,
        forks: [(1, (0, 9))].into(),
        unjoined: unjoined.iter().copied().collect(),
        site_frames: Default::default(),
    }
}

fn trace(dir: &str, chaos_seed: Option<u64>) -> Run {
    Run {
        trace_dir: dir.into(),
        chaos_seed,
    }
}

fn add(report: &mut Report, ctx: &Context, n: usize, c: &Candidate, r: &ReplayRun) {
    let verdict = ilgen_confirm::verdict::classify(r);
    report.add(
        ctx,
        &Entry {
            number: n,
            candidate: c,
            run: Some(r),
            verdict,
        },
    );
}

#[test]
fn equal_site_pairs_are_one_finding_and_the_rest_keep_their_reason() {
    let ctx = context(&[1]);
    let mut report = Report::new(&ctx, "/bin/a", trace("/t", None));
    let c = candidate([5, 6]);
    add(&mut report, &ctx, 1, &c, &run(ResultKind::Race, &[(6, 5)]));
    // The same pair the other way round, from another candidate: merged.
    add(&mut report, &ctx, 2, &c, &run(ResultKind::Race, &[(5, 6)]));
    add(&mut report, &ctx, 3, &c, &run(ResultKind::NoError, &[]));
    assert_eq!(report.findings.len(), 1);
    let Finding::Race(r) = &report.findings[0] else {
        panic!("a race")
    };
    assert_eq!(r.candidates, vec![1, 2]);
    assert_eq!(
        r.threads[1].created_at.as_ref().map(|l| l.site),
        Some(Some(9))
    );
    assert!(r.threads[1].never_joined && !r.threads[0].never_joined);
    assert_eq!(
        report.unjoined.iter().map(|t| t.tid).collect::<Vec<_>>(),
        [1]
    );
    assert_eq!(report.counts.confirmed_races, 2);
    assert_eq!(report.counts.no_error, 1);
    assert_eq!(report.unconfirmed[0].candidate, 3);
    assert_eq!(report.unconfirmed[0].verdict, Class::NoError);

    // The renderings, whole: snapshots in src/snapshots/ (a mismatch fails the test; review a
    // change with `cargo insta review` or by reading the .snap.new file insta writes).
    insta::assert_snapshot!("text_all", text::render(&report, true));
    insta::assert_snapshot!("text_confirmed", text::render(&report, false));
    insta::assert_snapshot!("sarif", sarif::render(&report));
    insta::assert_snapshot!("json", json::render(&report));
}

#[test]
fn runs_merge_by_site_pair_and_each_finding_names_its_runs_and_replay() {
    let ctx = context(&[]);
    // Run 1 confirms 5/6 and predicts 7/8 without confirming it; run 2 (chaos seed 3)
    // confirms both, 5/6 the other way round.
    let part = |dir: &str, seed, entries: [(usize, [SiteId; 2], ReplayRun); 2]| {
        let mut report = Report::new(&ctx, "/bin/a", trace(dir, seed));
        for (n, sites, r) in &entries {
            add(&mut report, &ctx, *n, &candidate(*sites), r);
        }
        report
    };
    let one = part(
        "/t/run-0",
        None,
        [
            (1, [5, 6], run(ResultKind::Race, &[(6, 5)])),
            (2, [7, 8], run(ResultKind::NoError, &[])),
        ],
    );
    let two = part(
        "/t/run-1",
        Some(3),
        [
            (1, [7, 8], run(ResultKind::Race, &[(8, 7)])),
            (2, [5, 6], run(ResultKind::Race, &[(5, 6)])),
        ],
    );
    let merged = Report::merge(vec![one, two]);
    let races: Vec<(usize, Vec<usize>, Vec<usize>, SiteId)> = merged
        .findings
        .iter()
        .map(|f| match f {
            Finding::Race(r) => (
                r.run,
                r.runs.clone(),
                r.candidates.clone(),
                r.current.location.site.unwrap(),
            ),
            _ => panic!("races only"),
        })
        .collect();
    assert_eq!(
        races,
        [(1, vec![1, 2], vec![1], 6), (2, vec![1, 2], vec![1], 8)]
    );
    assert_eq!(merged.counts.candidates, 4);
    assert_eq!(merged.counts.confirmed_races, 3);
    assert_eq!(
        (merged.unconfirmed[0].run, merged.unconfirmed[0].candidate),
        (1, 2)
    );
    assert_eq!(merged.runs[1].chaos_seed, Some(3));
    insta::assert_snapshot!("text_runs", text::render(&merged, true));
    let sarif: serde_json::Value = serde_json::from_str(&sarif::render(&merged)).unwrap();
    let result = &sarif["runs"][0]["results"][1];
    assert_eq!(result["properties"]["traceDir"], "/t/run-1");
    assert_eq!(result["properties"]["runs"], serde_json::json!([1, 2]));
    let json: serde_json::Value = serde_json::from_str(&json::render(&merged)).unwrap();
    assert_eq!(json["findings"][1]["run"], 2);
    assert_eq!(json["runs"][1]["trace_dir"], "/t/run-1");
}

#[test]
fn sites_name_demangled_functions_and_the_library_frames_inlined_at_the_user_line() {
    use ilgen_trace::sites::SiteTableBuilder;
    let deposit = "_ZN7Account7depositEl";
    let mut sites = SiteTableBuilder::new();
    // Site 1: `balances[i] += amount` with std::vector's operator[] inlined (-O2).
    let vector = "/usr/include/c++/12/bits/stl_vector.h";
    let operator = Frame::new(vector, 1128, 2, "_ZNSt6vectorIlSaIlEEixEm");
    sites.add(
        &Frame::new("/src/acct.cpp", 17, 19, deposit),
        &[operator],
        0,
    );
    // Site 2: the lock_guard line, with the guard and std::mutex::lock inlined.
    let mutex = "/usr/include/c++/12/bits/std_mutex.h";
    let guard = [
        Frame::new(mutex, 229, 19, "_ZNSt10lock_guardISt5mutexEC2ERS0_"),
        Frame::new(mutex, 100, 17, "_ZNSt5mutex4lockEv"),
    ];
    sites.add(&Frame::new("/src/acct.cpp", 14, 33, deposit), &guard, 0);
    // Site 3: a C function's fork.
    sites.add(&Frame::new("/src/acct.cpp", 27, 3, "main"), &[], 0);
    let binary = Binary::from_site_table(&sites.finish()).unwrap();
    let ctx = Context {
        binary: Some(&binary),
        forks: [(1, (0, 3))].into(),
        unjoined: Default::default(),
        site_frames: Default::default(),
    };
    let c = race_after_lock_at_site_2();
    let mut report = Report::new(&ctx, "/bin/a", trace("/t", None));
    add(&mut report, &ctx, 1, &c, &run(ResultKind::Race, &[(1, 1)]));
    let text = text::render(&report, false);
    assert!(!text.contains("_Z"), "{text}");
    insta::assert_snapshot!("text_names", text);
    let json = json::render(&report);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let step = &v["findings"][0]["schedule"][2]["location"];
    assert_eq!(step["function"], "Account::deposit(long)");
    assert_eq!(step["symbol"], deposit);
    assert_eq!(step["inlined"][1]["function"], "std::mutex::lock()");
    insta::assert_snapshot!("json_names", json);
    insta::assert_snapshot!("sarif_names", sarif::render(&report));
}

#[test]
fn an_observed_deadlock_is_a_finding_a_replay_of_the_same_lines_joins() {
    use ilgen_analysis::observed::LostWakeup;
    use ilgen_trace::replay::{BlockedThread, DeadlockReport};
    let ctx = context(&[]);
    let blocked = |tid, op: OpKind, site| BlockedThread {
        thread: ThreadRef {
            tid,
            parent: Some(0),
            child_index: 0,
        },
        op,
        site: Some(site),
        object: 0xc0,
        waits_for: vec![],
        holds: vec![],
        stack: vec![],
    };
    let d = DeadlockReport {
        threads: vec![blocked(0, OpKind::Join, 20), blocked(1, OpKind::Wake, 8)],
        cycle: vec![],
    };
    let o = Observed {
        deadlock: d.clone(),
        lost_wakeups: vec![LostWakeup {
            cond: 0xc0,
            waiter: 1,
            wait_site: 8,
            signaller: 0,
            signal_site: 16,
            broadcast: false,
        }],
    };
    let mut report = Report::new(&ctx, "/bin/a", trace("/t", None));
    report.observe(&ctx, &o, 7);
    assert!(report.confirmed());
    let text = text::render(&report, false);
    assert!(
        text.contains("WARNING: ilgen: deadlock (observed in the recorded run) (pid=7)"),
        "{text}"
    );
    assert!(text.contains("  Thread T1 is blocked in wait of 0xc0:\n    #0 site 8\n"));
    assert!(text.contains("Main thread signalled 0xc0 before thread T1 waited on it"));
    assert!(
        text.contains("    signal at site 16\n    wait at site 8\n"),
        "{text}"
    );
    assert!(text.contains("Observed: the recorded run (pid=7) ended with these threads"));
    assert!(text.contains("ilgen: 1 deadlock(s) observed in the recorded run\n"));

    // A replay that confirms the same blocked lines joins the observed finding.
    let mut r = run(ResultKind::Deadlock, &[]);
    if let Ok(out) = &mut r.outcome {
        out.deadlock = Some(d);
    }
    add(&mut report, &ctx, 1, &candidate([5, 6]), &r);
    assert_eq!(report.findings.len(), 1);
    let Finding::Deadlock(f) = &report.findings[0] else {
        panic!("a deadlock")
    };
    assert!(f.observed);
    assert_eq!(f.candidates, vec![1]);
    assert_eq!(f.replay_dir, "/t/replay-1");
    assert_eq!(f.blocked[1].op, OpKind::Wait);
    let json: serde_json::Value = serde_json::from_str(&json::render(&report)).unwrap();
    assert_eq!(json["counts"]["observed_deadlocks"], 1);
    assert_eq!(json["findings"][0]["observed"], true);
    assert_eq!(json["findings"][0]["lost_wakeups"][0]["signal"]["site"], 16);
}

/// A location at `file:line` in `function`, column `column`.
fn at(file: &str, line: u32, column: u32, function: &str) -> Location {
    Location {
        site: Some(line),
        source: Some(std::sync::Arc::new(Source {
            file: file.into(),
            line,
            column,
            function: function.into(),
            symbol: None,
            inlined: Vec::new(),
        })),
        native: None,
    }
}

/// The race of candidate `[5, 6]` replayed by process `pid`, its accesses at `lines` of `dir`.
fn race_at(pid: u32, dir: &str, lines: [u32; 2]) -> Race {
    let ctx = context(&[]);
    let mut report = Report::new(&ctx, "/bin/a", trace("/t", None));
    let mut r = run(ResultKind::Race, &[(6, 5)]);
    r.pid = pid;
    add(&mut report, &ctx, 1, &candidate([5, 6]), &r);
    let Some(Finding::Race(mut race)) = report.findings.pop() else {
        panic!("a race")
    };
    race.current.location = at(&format!("{dir}/src/a.c"), lines[0], 3, "worker");
    race.previous.location = at(&format!("{dir}/src/a.c"), lines[1], 9, "main");
    race
}

#[test]
fn a_fingerprint_ignores_addresses_pids_tids_columns_directories_and_order() {
    let print = |r: &Race| Finding::Race(r.clone()).fingerprint();
    let first = race_at(42, "/home/ci/checkout", [10, 20]);
    let mut other = race_at(4242, "/tmp/build-7", [10, 20]);
    other.current.addr = 0x7fff_0000;
    other.previous.addr = 0x7fff_0000;
    other.current.tid = 3;
    other.replay_dir = "/tmp/other/replay-9".into();
    other.candidates = vec![7];
    other.schedule = Schedule::default();
    if let Some(s) = other
        .current
        .location
        .source
        .as_mut()
        .map(std::sync::Arc::make_mut)
    {
        s.column = 1;
    }
    std::mem::swap(&mut other.current, &mut other.previous);
    assert_eq!(print(&first), print(&other));
    // Two `x++` lines: whichever replay ran second is the read; the fingerprint stays.
    let (mut one, mut two) = (first.clone(), first.clone());
    one.current.kind = AccessName::Read;
    two.previous.kind = AccessName::Read;
    assert_eq!(print(&one), print(&two));
    assert_eq!(print(&first).len(), 16);
    // The stored one is the same recipe (kept through the report) and the renderers show it.
    let stored = race_at(42, "/d", [5, 6]).fingerprint;
    let ctx = context(&[]);
    let mut report = Report::new(&ctx, "/bin/a", trace("/t", None));
    add(
        &mut report,
        &ctx,
        1,
        &candidate([5, 6]),
        &run(ResultKind::Race, &[(6, 5)]),
    );
    let Finding::Race(r) = &report.findings[0] else {
        panic!("a race")
    };
    assert_eq!(stored, print(r));
    let sarif: serde_json::Value = serde_json::from_str(&sarif::render(&report)).unwrap();
    assert_eq!(
        sarif["runs"][0]["results"][0]["partialFingerprints"][fingerprint::SARIF_KEY],
        serde_json::json!(stored)
    );
    // What the code is does change it: another line, another function, another access kind.
    let mut moved = first.clone();
    if let Some(s) = moved
        .current
        .location
        .source
        .as_mut()
        .map(std::sync::Arc::make_mut)
    {
        s.line = 11;
    }
    assert_ne!(print(&first), print(&moved));
    let mut renamed = first.clone();
    if let Some(s) = renamed
        .previous
        .location
        .source
        .as_mut()
        .map(std::sync::Arc::make_mut)
    {
        s.function = "init".into();
    }
    assert_ne!(print(&first), print(&renamed));
    let mut read = first.clone();
    read.current.kind = AccessName::Read;
    assert_ne!(print(&first), print(&read));
}

#[test]
fn tsan_patterns_match_substrings_with_wildcards_and_anchors() {
    use suppress::matches;
    for (pattern, s, want) in [
        ("bump", "do_bump_a", true),
        ("^bump", "do_bump_a", false),
        ("^do_", "do_bump_a", true),
        ("bump_a$", "do_bump_a", true),
        ("bump$", "do_bump_a", false),
        ("^do_bump_a$", "do_bump_a", true),
        ("^do_bump$", "do_bump_a", false),
        ("do*a", "do_bump_a", true),
        ("^d*p*a$", "do_bump_a", true),
        ("^d*x*a$", "do_bump_a", false),
        ("a*a$", "abab_a", true),
        ("Account::*(long)", "Account::deposit(long)", true),
        ("*", "", false),
        ("x", "", false),
    ] {
        assert_eq!(matches(pattern, s), want, "{pattern} on {s}");
    }
}

#[test]
fn a_rule_hides_a_race_by_any_frame_file_or_global_and_says_which() {
    let mut race = race_at(42, "/src", [10, 20]);
    if let Some(s) = race
        .previous
        .location
        .source
        .as_mut()
        .map(std::sync::Arc::make_mut)
    {
        s.inlined.push(Source::from(&ilgen_trace::sites::Frame {
            file: "/usr/include/c++/14/bits/std_mutex.h".into(),
            line: 5,
            column: 1,
            function: "std::mutex::lock()".into(),
            symbol: "_ZNSt5mutex4lockEv".into(),
        }));
    }
    race.object = Some(Object {
        name: "counter".into(),
        offset: 0,
        size: 4,
    });
    let hides = |rules: &str| {
        let mut report = Report::new(&context(&[]), "/bin/app", trace("/t", None));
        report.findings.push(Finding::Race(race.clone()));
        report.suppress(&suppress::Suppressions::parse("s.supp", rules).unwrap());
        report
            .suppressed_by_rule()
            .first()
            .map(|(r, n)| (r.to_string(), *n))
    };
    let one = |r: &str| Some((r.to_owned(), 1));
    assert_eq!(hides("race:^worker$\n"), one("race:^worker$"));
    assert_eq!(
        hides("# c\n\nrace:std::mutex::lock\n"),
        one("race:std::mutex::lock")
    );
    assert_eq!(hides("race:/src/a.c\n"), one("race:/src/a.c"));
    assert_eq!(hides("race:^counter$\n"), one("race:^counter$"));
    assert_eq!(hides("called_from_lib:app\n"), one("called_from_lib:app"));
    assert_eq!(hides("deadlock:worker\nrace:^work$\n"), None);
    assert_eq!(hides("race:nothing\nrace:main\n"), one("race:main"));
}

#[test]
fn a_bad_suppressions_line_is_an_error_naming_file_and_line_other_tsan_types_a_note() {
    use suppress::Suppressions;
    let err = |text: &str| Suppressions::parse("f.supp", text).unwrap_err();
    let e = err("race:a\n\n# x\nrace\n");
    assert_eq!((e.path.as_str(), e.line), ("f.supp", 4));
    assert!(
        e.to_string().starts_with("f.supp:4: `race` has no `:`;"),
        "{e}"
    );
    assert_eq!(err("leak:x\n").what, "unknown suppression type `leak`");
    assert_eq!(err("race:\n").what, "`race:` has an empty pattern");
    let s = Suppressions::parse("f.supp", "race_top:a\nmutex:b\nrace:c\n").unwrap();
    assert_eq!(
        s.notes,
        [
            "f.supp:1: ilgen ignores `race_top:` suppressions (it reports no such finding)",
            "f.supp:2: ilgen ignores `mutex:` suppressions (it reports no such finding)"
        ]
    );
}

/// An atomicity candidate: T0's transaction begun at site `begin` reads at 5 and writes at 7, T1
/// writes at 6 between them.
fn lost_update(begin: SiteId) -> Candidate {
    let Candidate::Race { schedule, .. } = candidate([5, 6]) else {
        unreachable!("candidate() makes a race")
    };
    let side = |tid, site, access| AccessSide { tid, site, access };
    Candidate::Atomicity {
        object: ObjectRange { addr: 0x10, len: 4 },
        begin: Step {
            tid: 0,
            op: OpKind::TxBegin,
            object: None,
            peer: None,
            site: Some(begin),
            seq: Some(2),
            op_index: 1,
            timed_out: None,
        },
        accesses: [
            side(0, 5, AccessName::Read),
            side(1, 6, AccessName::Write),
            side(0, 7, AccessName::Write),
        ],
        after: [2, 1, 2],
        pattern: ilgen_analysis::atomicity::Pattern::ReadWriteWrite,
        schedule,
    }
}

#[test]
fn atomicity_violations_merge_across_runs_by_transaction_and_access_lines() {
    let ctx = context(&[]);
    let confirmed = || {
        let mut r = run(ResultKind::Atomicity, &[]);
        if let Ok(o) = &mut r.outcome {
            o.watched = vec![Some(1), Some(2), Some(3)];
        }
        r
    };
    // Run 1 predicts the violation but its replay misses it; run 2 confirms it twice, and the
    // same three lines in a transaction begun elsewhere once.
    let mut one = Report::new(&ctx, "/bin/a", trace("/t/run-0", None));
    add(
        &mut one,
        &ctx,
        1,
        &lost_update(3),
        &run(ResultKind::NoError, &[]),
    );
    let mut two = Report::new(&ctx, "/bin/a", trace("/t/run-1", Some(4)));
    add(&mut two, &ctx, 1, &lost_update(3), &confirmed());
    add(&mut two, &ctx, 2, &lost_update(3), &confirmed());
    add(&mut two, &ctx, 3, &lost_update(4), &confirmed());
    let merged = Report::merge(vec![one, two]);
    let found: Vec<(usize, Vec<usize>, Vec<usize>, SiteId)> = merged
        .findings
        .iter()
        .map(|f| match f {
            Finding::Atomicity(a) => (
                a.run,
                a.runs.clone(),
                a.candidates.clone(),
                a.transaction.site.unwrap(),
            ),
            _ => panic!("atomicity violations only"),
        })
        .collect();
    assert_eq!(
        found,
        [(2, vec![1, 2], vec![1, 2], 3), (2, vec![2], vec![3], 4)]
    );
    assert_eq!(
        (
            merged.counts.atomicity_candidates,
            merged.counts.confirmed_atomicity
        ),
        (4, 3)
    );
    let u = &merged.unconfirmed[0];
    assert_eq!(
        (u.run, u.candidate, u.predicted),
        (1, 1, Predicted::AtomicityViolation)
    );

    let text = text::render(&merged, true);
    assert!(
        text.contains(
            "  Predicted in runs 1, 2 (of 2); replayed with run 2's schedule: \
             ilgen replay /t/run-1:1\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("SUMMARY: ilgen: atomicity violation site 5\n"),
        "{text}"
    );
    assert!(
        text.contains("run 1 candidate 1: atomicity_violation at site 3 and site 5 and site 6 and site 7: no error"),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&json::render(&merged)).unwrap();
    let f = &json["findings"][0];
    assert_eq!(f["kind"], "atomicity");
    assert_eq!(
        (&f["run"], &f["runs"]),
        (&2.into(), &serde_json::json!([1, 2]))
    );
    assert_eq!(f["pattern"], "read_write_write");
    // The fingerprint names the transaction too: the same lines begun elsewhere differ.
    let prints: Vec<String> = merged.findings.iter().map(Finding::fingerprint).collect();
    assert!(
        prints[0].len() == 16 && prints[0] != prints[1],
        "{prints:?}"
    );
    assert_eq!(f["fingerprint"], prints[0].as_str());
    let sarif: serde_json::Value = serde_json::from_str(&sarif::render(&merged)).unwrap();
    let result = &sarif["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], sarif::RULE_ATOMICITY);
    assert_eq!(result["properties"]["traceDir"], "/t/run-1");
    assert_eq!(result["properties"]["runs"], serde_json::json!([1, 2]));
}

/// The report of the race of candidate `[5, 6]`, its replay's outcome changed by `edit`.
fn race_report(edit: impl FnOnce(&mut Outcome)) -> Report {
    let ctx = context(&[]);
    let mut report = Report::new(&ctx, "/bin/a", trace("/t", None));
    let mut r = run(ResultKind::Race, &[(6, 5)]);
    if let Ok(o) = r.outcome.as_mut() {
        edit(o);
    }
    add(&mut report, &ctx, 1, &candidate([5, 6]), &r);
    report
}

#[test]
fn a_race_on_heap_memory_names_its_block_and_allocation() {
    let report = race_report(|o| {
        o.races[0].heap_block = Some(ilgen_trace::replay::HeapBlock {
            addr: 0x8,
            size: 24,
            thread: ThreadRef {
                tid: 1,
                parent: Some(0),
                child_index: 0,
            },
            site: Some(3),
            stack: vec![StackFrame::Site(2)],
        })
    });
    let Finding::Race(race) = &report.findings[0] else {
        panic!("a race")
    };
    let b = race.heap_block.as_ref().expect("the block");
    assert_eq!((b.address, b.size, b.thread), (0x8, 24, 1));
    assert_eq!((b.location.site, b.stack[0].site), (Some(3), Some(2)));
    let text = text::render(&report, false);
    assert!(
        text.contains(
            "  Location is heap block of size 24 at 0x8 allocated by thread T1 at:\n    \
             #0 site 3\n    #1 site 2\n"
        ),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&json::render(&report)).unwrap();
    assert_eq!(json["findings"][0]["heap_block"]["size"], 24);
    let sarif = sarif::render(&report);
    assert!(
        sarif.contains("Data race on 0x10 (heap block of size 24 at 0x8 allocated by T1)"),
        "{sarif}"
    );
}

#[test]
fn a_thread_created_through_calls_shows_its_creators_stack() {
    let report =
        race_report(|o| o.created = [(1, vec![StackFrame::Site(4), StackFrame::Site(2)])].into());
    let text = text::render(&report, false);
    assert!(
        text.contains(
            "  Thread T1 (tid=1) created by main thread at:\n    #0 site 9\n    #1 site 4\n    \
             #2 site 2\n"
        ),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&json::render(&report)).unwrap();
    assert_eq!(
        json["findings"][0]["threads"][1]["created_stack"][1]["site"],
        2
    );
}

/// Candidate `sites` as the fallback of candidate `of`.
fn fallback(of: usize, sites: [SiteId; 2]) -> Candidate {
    let mut c = candidate(sites);
    if let Candidate::Race { fallback_of, .. } = &mut c {
        *fallback_of = Some(of);
    }
    c
}

/// A recorded run that exited, of no recorded threads.
fn exited_run() -> RecordedRun {
    RecordedRun {
        meta: ilgen_trace::Meta {
            pid: 1,
            argv: vec!["./a".into()],
            cwd: "/t".into(),
            binary: "/bin/a".into(),
            build_id: "00".into(),
            end: Some(RunEnd::Exit),
            ..Default::default()
        },
        forks: BTreeMap::new(),
        unjoined: BTreeSet::new(),
        observed: None,
    }
}

#[test]
fn candidates_not_replayed_name_the_one_that_confirmed_their_two_sites() {
    // Objects' candidates 1 at lines 5 and 6, 2 and 3 at 7 and 8; fallbacks 4 and 6 of 1, 5 of
    // 2. 1 diverged and its first fallback (4) confirmed its pair, so 6 was not replayed; 2
    // confirmed, so neither 3 (another object's) nor 5 were.
    let candidates = [
        candidate([5, 6]),
        candidate([7, 8]),
        candidate([8, 7]),
        fallback(1, [5, 6]),
        fallback(2, [7, 8]),
        fallback(1, [5, 6]),
    ];
    let replays = [
        Replayed::Run(Box::new(run(ResultKind::Diverged, &[]))),
        Replayed::Run(Box::new(run(ResultKind::Race, &[(8, 7)]))),
        Replayed::Covered(2),
        Replayed::Run(Box::new(run(ResultKind::Race, &[(6, 5)]))),
        Replayed::Covered(2),
        Replayed::Covered(4),
    ];
    let report = Report::of_run(None, &exited_run(), "/t", &candidates, &replays);
    let c = &report.counts;
    assert_eq!((c.candidates, c.confirmed_races, c.infeasible), (3, 2, 1));
    assert_eq!(
        (
            c.fallbacks_replayed,
            c.fallbacks_confirmed,
            c.fallbacks_skipped,
            c.not_replayed
        ),
        (1, 1, 2, 3)
    );
    let confirmed_by: Vec<Vec<usize>> = report
        .findings
        .iter()
        .map(|f| match f {
            Finding::Race(r) => r.candidates.clone(),
            _ => panic!("{f:?}"),
        })
        .collect();
    assert_eq!(
        confirmed_by,
        [vec![2], vec![4]],
        "each finding once, by its lines"
    );
    assert_eq!(report.unconfirmed.len(), 1);
    assert_eq!(report.unconfirmed[0].fallback_of, None);
    let skipped: Vec<(usize, Option<usize>, usize)> = report
        .not_replayed
        .iter()
        .map(|n| (n.candidate, n.fallback_of, n.confirmed_by))
        .collect();
    assert_eq!(skipped, [(3, None, 2), (5, Some(2), 2), (6, Some(1), 4)]);
    let all = text::render(&report, true);
    assert!(
        all.contains(
            "ilgen: 3 candidate(s) replayed: 2 confirmed race(s), 0 confirmed deadlock(s), 0 no \
             error, 1 infeasible, 0 failed\nilgen: fallback schedules: 1 replayed, 1 confirmed, 2 \
             not replayed (a replay at their two sites confirmed first)\nilgen: 3 candidate(s) not \
             replayed: an earlier candidate at the same two sites confirmed their race\n"
        ) && all.contains(
            "candidate 3: race at site 8 and site 7: not replayed: candidate 2 confirmed the race \
             at these two sites\ncandidate 5 (fallback of 2): race at site 7 and site 8: not \
             replayed: candidate 2 confirmed the race at these two sites\n"
        ),
        "{all}"
    );
    let short = text::render(&report, false);
    assert!(
        short.contains("confirmed their race; --show-all lists them\n")
            && !short.contains("candidate 3:"),
        "{short}"
    );
    let json: serde_json::Value = serde_json::from_str(&json::render(&report)).unwrap();
    assert_eq!(json["counts"]["not_replayed"], 3);
    assert_eq!(json["not_replayed"][2]["confirmed_by"], 4);
    assert_eq!(json["not_replayed"][2]["fallback_of"], 1);
    assert!(json["not_replayed"][0].get("fallback_of").is_none());
}

/// Shard `index` of 2, of `candidates` at `keys` (their unsharded places), replayed as `replays`.
fn shard_part(
    index: usize,
    keys: Vec<ilgen_analysis::shard::Key>,
    candidates: &[Candidate],
    replays: &[Replayed],
) -> crate::shard::Part {
    crate::shard::Part {
        file: format!("shard-{index}.json"),
        report: Report::of_run(None, &exited_run(), "/t", candidates, replays),
        shard: crate::shard::ShardInfo {
            index,
            count: 2,
            trace: "x".into(),
            build_id: "00".into(),
            analysis: "--fallbacks 2".into(),
            candidates: keys,
        },
    }
}

#[test]
fn shards_renumber_the_candidate_a_fallback_stands_in_for() {
    // Units 0 and 1, one shard each, each a candidate and its fallback; neither confirmed.
    let part = |index: usize| {
        let unit = index - 1;
        shard_part(
            index,
            vec![(0, unit, 0), (1, unit, 0)],
            &[candidate([5, 6]), fallback(1, [5, 6])],
            &[
                Replayed::Run(Box::new(run(ResultKind::NoError, &[]))),
                Replayed::Run(Box::new(run(ResultKind::NoError, &[]))),
            ],
        )
    };
    let merged = Report::merge_shards(vec![part(2), part(1)]).unwrap();
    // Unsharded: the two candidates (1, 2), then their fallbacks (3 of 1, 4 of 2).
    let numbered: Vec<(usize, Option<usize>)> = merged
        .unconfirmed
        .iter()
        .map(|u| (u.candidate, u.fallback_of))
        .collect();
    assert_eq!(numbered, [(1, None), (2, None), (3, Some(1)), (4, Some(2))]);
    assert_eq!(merged.counts.fallbacks_replayed, 2);
    let text = text::render(&merged, true);
    assert!(
        text.contains("candidate 4 (fallback of 2): race at site 5 and site 6: no error: "),
        "{text}"
    );
}

#[test]
fn shards_renumber_a_candidate_not_replayed_and_the_one_that_confirmed_its_pair() {
    // Units 0 and 2 can share sites 5 and 6, so shard 1 has both; unit 1 is shard 2's.
    let first = shard_part(
        1,
        vec![(0, 0, 0), (0, 2, 0)],
        &[candidate([5, 6]), candidate([5, 6])],
        &[
            Replayed::Run(Box::new(run(ResultKind::Race, &[(5, 6)]))),
            Replayed::Covered(1),
        ],
    );
    let second = shard_part(
        2,
        vec![(0, 1, 0)],
        &[candidate([7, 8])],
        &[Replayed::Run(Box::new(run(ResultKind::NoError, &[])))],
    );
    let merged = Report::merge_shards(vec![second, first]).unwrap();
    let skipped: Vec<(usize, usize)> = merged
        .not_replayed
        .iter()
        .map(|n| (n.candidate, n.confirmed_by))
        .collect();
    assert_eq!(skipped, [(3, 1)]);
    assert_eq!(merged.unconfirmed[0].candidate, 2);
    assert_eq!(
        (merged.counts.candidates, merged.counts.not_replayed),
        (2, 1)
    );
}

#[test]
fn both_accesses_of_a_race_show_the_locks_they_were_made_holding() {
    let held = |object, site| HeldLock {
        object,
        site: Some(site),
        stack: vec![StackFrame::Site(2)],
    };
    let report = race_report(|o| {
        o.races[0].current.locks = vec![held(0x40, 11)];
        o.races[0].previous.locks = vec![held(0x80, 12)];
    });
    let text = text::render(&report, false);
    assert!(
        text.contains(
            "  Write of size 4 at 0x10 by thread T1:\n    #0 site 6\n    holding 0x40, acquired \
             at:\n      #0 site 11\n      #1 site 2\n\n  Previous write of size 4 at 0x10 by main \
             thread:\n    #0 site 5\n    holding 0x80, acquired at:\n      #0 site 12\n      #1 \
             site 2\n\n"
        ),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&json::render(&report)).unwrap();
    let previous = &json["findings"][0]["previous"]["locks"][0];
    assert_eq!(
        (&previous["object"], &previous["location"]["site"]),
        (&0x80.into(), &12.into())
    );
    let sarif: serde_json::Value = serde_json::from_str(&sarif::render(&report)).unwrap();
    let result = &sarif["runs"][0]["results"][0];
    let related: Vec<&str> = result["relatedLocations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["message"]["text"].as_str().unwrap())
        .collect();
    assert!(
        related.contains(&"0x40 held by T1 at the write, acquired here")
            && related.contains(&"0x80 held by T0 at the previous write, acquired here"),
        "{related:?}"
    );
    assert_eq!(result["stacks"].as_array().unwrap().len(), 4);
}

#[test]
fn uninstrumented_frames_are_named_and_schedule_steps_sit_at_the_users_line() {
    use ilgen_trace::sites::SiteTableBuilder;
    let mut sites = SiteTableBuilder::new();
    let deposit = "_ZN7Account7depositEl";
    // Site 1: the racing access; site 2, the lock in gthr-default.h's __gthread_mutex_lock, a
    // real function at -O0; site 3, the lock_guard line that called into it; site 4, main's
    // `std::thread` line.
    sites.add(&Frame::new("/src/acct.cpp", 17, 19, deposit), &[], 0);
    let gthr = "/usr/include/x86_64-linux-gnu/c++/12/bits/gthr-default.h";
    sites.add(
        &Frame::new(gthr, 749, 12, "_ZL20__gthread_mutex_lockP15pthread_mutex_t"),
        &[],
        0,
    );
    sites.add(&Frame::new("/src/acct.cpp", 14, 33, deposit), &[], 0);
    sites.add(&Frame::new("/src/acct.cpp", 27, 3, "main"), &[], 0);
    let binary = Binary::from_site_table(&sites.finish()).unwrap();
    let ctx = Context {
        binary: Some(&binary),
        // libstdc++ forked T1: the recorded fork has no site.
        forks: [(1, (0, ilgen_trace::NO_SITE))].into(),
        unjoined: Default::default(),
        site_frames: Default::default(),
    };
    let native = |module: &str, offset| {
        StackFrame::Native(NativeFrame {
            module: Some(module.into()),
            offset,
        })
    };
    let libstdcxx = "/nonexistent/libstdc++.so.6";
    let c = race_after_lock_at_site_2();
    let mut r = run(ResultKind::Race, &[(1, 1)]);
    if let Ok(o) = r.outcome.as_mut() {
        o.races[0].current.stack = vec![native(libstdcxx, 0xd44a3)];
        // Below main only libc's start-up: not shown.
        o.created = [(
            1,
            vec![
                native(libstdcxx, 0xd4579),
                StackFrame::Site(4),
                native("/lib/libc.so.6", 0x2724a),
            ],
        )]
        .into();
        o.step_stacks = vec![Some(0), None, Some(1)];
        o.stacks = vec![vec![StackFrame::Site(4)], vec![StackFrame::Site(3)]];
    }
    let mut report = Report::new(&ctx, "/bin/a", trace("/t", None));
    add(&mut report, &ctx, 1, &c, &r);
    let text = text::render(&report, false);
    assert!(
        text.contains(
            "    #0 Account::deposit(long) /src/acct.cpp:17:19\n    #1 <unnamed> \
             (libstdc++.so.6+0xd44a3)\n\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "  Thread T1 (tid=1) created by main thread at:\n    #0 main /src/acct.cpp:27:3\n    \
             #1 <unnamed> (libstdc++.so.6+0xd4579)\n\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "    1. T0 fork T1 at /src/acct.cpp:27\n    2. T1 start\n    3. T1 lock 0x40 \
             (recorded address) at /src/acct.cpp:14\n"
        ),
        "{text}"
    );
    assert!(
        !text.contains("gthr-default.h") && !text.contains("libc.so.6"),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&json::render(&report)).unwrap();
    let frame = &json["findings"][0]["current"]["stack"][0];
    assert_eq!(frame["site"], serde_json::Value::Null);
    assert_eq!(frame["native"]["module"], libstdcxx);
    assert_eq!(frame["native"]["offset"], 0xd44a3);
    let sarif: serde_json::Value = serde_json::from_str(&sarif::render(&report)).unwrap();
    let frames = &sarif["runs"][0]["results"][0]["stacks"][0]["frames"];
    assert_eq!(frames[1]["module"], "libstdc++.so.6");
    assert_eq!(
        frames[1]["location"]["physicalLocation"]["address"]["relativeAddress"],
        0xd44a3
    );
}

/// The lines of a text report's schedule, after its heading.
fn schedule_listing(text: &str) -> Vec<&str> {
    text.lines()
        .skip_while(|l| !l.contains("Schedule that exposed it"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect()
}

#[test]
fn steps_a_thread_repeats_at_one_place_fold_into_one_line() {
    let ctx = context(&[]);
    let mut c = candidate([1, 1]);
    let Candidate::Race { schedule, .. } = &mut c else {
        panic!("a race")
    };
    // Start-up once-locks of a library: 5 lock/unlock pairs on one object at one site, then
    // three at another site (too few to fold), before main's fork. With no binary the sites have
    // no names: the lines differ by site only where they fold.
    let once = |op_index, site| Step {
        tid: 0,
        op: if op_index % 2 == 0 {
            OpKind::Lock
        } else {
            OpKind::Unlock
        },
        object: Some(0x73c),
        peer: None,
        site: Some(site),
        seq: Some(op_index),
        op_index: op_index as u32,
        timed_out: None,
    };
    let mut steps: Vec<Step> = (0..10).map(|i| once(i, 5)).collect();
    steps.extend((10..13).map(|i| once(i, 6)));
    steps.extend(schedule.steps());
    *schedule = ScheduleOut::whole(0, steps);
    let mut report = Report::new(&ctx, "/bin/a", trace("/t", None));
    add(&mut report, &ctx, 1, &c, &run(ResultKind::Race, &[(1, 1)]));
    let text = text::render(&report, false);
    let listing = schedule_listing(&text);
    assert_eq!(
        listing,
        [
            "    1-10. T0 lock/unlock 0x73c (recorded address) (10 steps)",
            "    11. T0 lock 0x73c (recorded address)",
            "    12. T0 unlock 0x73c (recorded address)",
            "    13. T0 lock 0x73c (recorded address)",
            "    14. T0 fork T1",
            "    15. T1 start",
        ],
        "{text}"
    );
}

#[test]
fn a_long_schedule_keeps_its_last_steps_numbered_as_in_the_whole_schedule() {
    let ctx = context(&[]);
    let mut c = candidate([1, 1]);
    let Candidate::Race { schedule, .. } = &mut c else {
        panic!("a race")
    };
    // A server's schedule: main takes and releases a lock 300 times before the fork.
    let turn = |i: u64| Step {
        tid: 0,
        op: if i % 2 == 0 {
            OpKind::Lock
        } else {
            OpKind::Unlock
        },
        object: Some(0x40 + 8 * (i / 2 % 3)),
        peer: None,
        site: Some(5),
        seq: Some(i),
        op_index: i as u32,
        timed_out: None,
    };
    let mut steps: Vec<Step> = (0..600).map(turn).collect();
    steps.extend(schedule.steps());
    *schedule = ScheduleOut::whole(0, steps);
    let mut report = Report::new(&ctx, "/bin/a", trace("/t", None));
    add(&mut report, &ctx, 1, &c, &run(ResultKind::Race, &[(1, 1)]));
    let Finding::Race(r) = &report.findings[0] else {
        panic!("a race")
    };
    assert_eq!(r.schedule.steps, 602);
    assert_eq!(r.schedule.last.len(), SHOWN_STEPS);
    assert_eq!(r.schedule.first_shown(), 602 - SHOWN_STEPS + 1);
    assert_eq!(r.schedule.last[SHOWN_STEPS - 1].op, OpKind::Start);
    // Step 403 is main's turn 402 (0-based): a lock of the object of pair 201 (201 % 3 = 0).
    assert_eq!(r.schedule.last[0].op, OpKind::Lock);
    assert_eq!(r.schedule.last[0].object, Some(0x40));
    let text = text::render(&report, false);
    let listing = schedule_listing(&text);
    assert_eq!(
        listing[0],
        "    1-402. (steps not listed; `ilgen replay` runs them)"
    );
    assert_eq!(listing[1], "    403. T0 lock 0x40 (recorded address)");
    assert_eq!(listing[3], "    405. T0 lock 0x48 (recorded address)");
    assert_eq!(listing[listing.len() - 1], "    602. T1 start", "{text}");
    let v: serde_json::Value = serde_json::from_str(&json::render(&report)).unwrap();
    assert_eq!(v["findings"][0]["schedule_steps"], 602);
    assert_eq!(
        v["findings"][0]["schedule"].as_array().map(Vec::len),
        Some(SHOWN_STEPS)
    );
    let sarif: serde_json::Value = serde_json::from_str(&sarif::render(&report)).unwrap();
    let flows = &sarif["runs"][0]["results"][0]["codeFlows"][0]["threadFlows"];
    assert_eq!(flows[0]["locations"][0]["executionOrder"], 403);
    // The parsed report holds what was rendered.
    let (back, _) = json::parse("r.json", &json::render(&report)).unwrap();
    assert_eq!(back, report);
}
