//! `ilgen detect` as a command: its flags, the files it writes, its exit codes and errors, on
//! hand-written runs written out as trace directories.

use ilgen_analysis::candidates::Candidate;
use ilgen_analysis::testkit::{listing1, Run};
use ilgen_analysis::{Backend, Options};
use ilgen_trace::OpKind;

/// An address no other test object uses.
const D: u64 = 0x3000;

/// The candidates `ilgen detect` finds with its default flags, from the analysis directly.
fn detect(r: &Run) -> Vec<Candidate> {
    let options = Options {
        max_per_var: 1,
        all_sites: false,
        fallbacks: 2,
        window: ilgen_analysis::window::DEFAULT_SIZE,
        max_states: super::MAX_STATES,
        backend: Backend::Native,
        deciding: Default::default(),
        atomicity: false,
        transactions: None,
        max_candidates: usize::MAX,
    };
    ilgen_analysis::analyze(r.traces(), &options)
        .expect("native analysis")
        .1
}

/// A trace directory holding `r`, as the runtime writes one.
fn trace_dir(r: &Run, name: &str) -> std::path::PathBuf {
    use ilgen_trace::format::{encode_header, thread_file_name, Encoder};
    use ilgen_trace::meta::META_FILE;
    use ilgen_trace::{Meta, RunEnd};
    let dir = std::env::temp_dir().join(format!("ilgen-detect-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let meta = Meta {
        pid: 1,
        argv: vec!["./listing1".into()],
        cwd: dir.display().to_string(),
        binary: "/nonexistent/listing1".into(),
        build_id: "00".into(),
        end: Some(RunEnd::Exit),
        ..Default::default()
    };
    std::fs::write(dir.join(META_FILE), meta.to_json()).unwrap();
    for t in r.traces() {
        let mut bytes = encode_header(&t.header);
        bytes.extend(Encoder::default().all(&t.events.to_vec()));
        std::fs::write(dir.join(thread_file_name(t.header.tid)), bytes).unwrap();
    }
    dir
}

fn args(dir: &std::path::Path, format: super::Format) -> super::DetectArgs {
    super::DetectArgs {
        trace_dirs: vec![dir.to_path_buf()],
        no_replay: true,
        window: 10_000,
        max_states: super::MAX_STATES,
        max_per_var: 1,
        all_sites: false,
        fallbacks: 2,
        format,
        progress: false,
        quiet: false,
        show_all: false,
        stats: false,
        replay_timeout: ilgen_confirm::DEFAULT_TIMEOUT_SECS,
        replay_jobs: None,
        before_replay: None,
        solver: super::Solver::Native,
        trust_trace: false,
        no_reads_from: false,
        atomicity: false,
        atomic: Vec::new(),
        max_candidates: 1000,
        suppressions: None,
        shard: None,
    }
}

#[test]
fn run_writes_a_versioned_candidates_file_and_exits_with_findings() {
    use ilgen_analysis::candidates::{read, replay_schedule, FILE_NAME, FORMAT_VERSION};
    let dir = trace_dir(&listing1(), "run");
    let code = super::run(&args(&dir, super::Format::Json)).unwrap();
    assert_eq!(code, crate::exit::FINDINGS);
    let trace = ilgen_trace::TraceDir::open(&dir).unwrap();
    let file = read(&dir.join(FILE_NAME), &trace.threads).unwrap();
    assert_eq!(file.format_version, FORMAT_VERSION);
    assert_eq!(file.candidates, detect(&listing1()));
    assert_eq!(file.stats.threads, 2);
    // No replay, no schedule file: `ilgen replay` writes the one it needs.
    assert!(!dir.join("schedule-1.json").exists());
    let headers: Vec<_> = trace.threads.iter().map(|t| t.header).collect();
    let schedule = replay_schedule(&file.candidates[0], &headers, &file.build_id);
    assert_eq!(schedule.build_id, "00");
    let steps: Vec<_> = schedule
        .steps
        .iter()
        .map(|s| (s.tid, s.index, s.op))
        .collect();
    assert_eq!(
        steps,
        vec![
            (0, 0, OpKind::Fork),
            (1, 0, OpKind::Start),
            (1, 1, OpKind::Lock),
            (1, 2, OpKind::Unlock)
        ]
    );
    let threads: Vec<_> = schedule
        .threads
        .iter()
        .map(|t| (t.tid, t.parent, t.child_index))
        .collect();
    assert_eq!(threads, vec![(0, None, 0), (1, Some(0), 0)]);
    // A stale schedule of an earlier run goes; the clean run below writes none.
    std::fs::write(dir.join("schedule-7.json"), "{}").unwrap();
    assert_eq!(super::run(&args(&dir, super::Format::Json)).unwrap(), 66);
    assert!(!dir.join("schedule-7.json").exists());
    // Text mode without the binary names sites by id, and a clean run exits clean.
    let mut clean = Run::new(1);
    clean.w(0, D, 1);
    let dir2 = trace_dir(&clean, "clean");
    assert_eq!(
        super::run(&args(&dir2, super::Format::Text)).unwrap(),
        crate::exit::CLEAN
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&dir2);
}

#[test]
fn sarif_with_no_replay_is_an_input_error() {
    let a = args(std::path::Path::new("/nonexistent"), super::Format::Sarif);
    let err = super::run(&a).unwrap_err();
    assert_eq!(err.exit_code(), crate::exit::INPUT_ERROR);
    assert!(err.to_string().contains("--no-replay"), "{err}");
}

#[test]
fn replay_refuses_a_trace_whose_binary_is_missing() {
    // Candidates are found, but the recorded binary cannot be read: replaying is impossible.
    let dir = trace_dir(&listing1(), "replay-no-binary");
    let mut a = args(&dir, super::Format::Text);
    a.no_replay = false;
    let err = super::run(&a).unwrap_err();
    assert_eq!(err.exit_code(), crate::exit::INPUT_ERROR);
    assert!(err.to_string().contains("recorded binary"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn detect_args_parse_with_their_defaults() {
    use clap::Parser;
    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: super::DetectArgs,
    }
    let cli =
        Cli::try_parse_from(["ilgen", "--no-replay", "--format", "json", "out/run-1"]).unwrap();
    let a = cli.args;
    assert_eq!(a.trace_dirs, [std::path::Path::new("out/run-1")]);
    assert!(a.no_replay && !a.all_sites);
    assert_eq!((a.window, a.max_per_var), (10_000, 1));
    assert_eq!(a.format, super::Format::Json);
    let cli = Cli::try_parse_from([
        "ilgen",
        "--window",
        "50",
        "--max-per-var",
        "3",
        "--all-sites",
    ])
    .unwrap();
    assert_eq!((cli.args.window, cli.args.max_per_var), (50, 3));
    assert!(cli.args.all_sites && cli.args.trace_dirs.is_empty());
    assert_eq!(cli.args.format, super::Format::Text);
    let cli = Cli::try_parse_from(["ilgen", "out/run-0", "out/run-1"]).unwrap();
    assert_eq!(cli.args.trace_dirs.len(), 2);
}

#[test]
fn several_traces_must_be_distinct_runs_of_one_binary() {
    use ilgen_trace::meta::META_FILE;
    let a = trace_dir(&listing1(), "multi-a");
    let b = trace_dir(&listing1(), "multi-b");
    let mut both = args(&a, super::Format::Text);
    both.no_replay = false;
    both.trace_dirs.push(b.clone());
    let error = |args: &super::DetectArgs| {
        let err = super::run(args).unwrap_err();
        assert_eq!(err.exit_code(), crate::exit::INPUT_ERROR);
        err.to_string()
    };
    // Same binary: past the check, stopped where replay needs the (missing) binary.
    assert!(error(&both).contains("recorded binary"));
    let mut twice = both.clone();
    twice.trace_dirs[1] = a.join(".");
    assert!(error(&twice).contains("are the same trace directory"));
    let mut meta = ilgen_trace::Meta::read(&b).unwrap();
    meta.build_id = "01".into();
    std::fs::write(b.join(META_FILE), meta.to_json()).unwrap();
    let msg = error(&both);
    assert!(
        msg.contains("were recorded from different binaries"),
        "{msg}"
    );
    assert!(msg.contains(&b.display().to_string()), "{msg}");
    both.no_replay = true;
    assert!(error(&both).contains("--no-replay takes one trace directory"));
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
}
