//! `ilgen merge`: the report of a sharded analysis from the reports of its shards.
//!
//! Takes the JSON reports that `ilgen detect --shard I/N --format json` printed for every I of one
//! trace, in any order, and the output flags; gives the report `ilgen detect` gives without
//! `--shard` ([`ilgen_report::Report::merge_shards`]), less what `--suppressions` hide, and its
//! exit code: [`exit::FINDINGS`] when a finding is confirmed, else [`exit::CLEAN`]; shards of
//! different traces, binaries or options, or a set with a shard missing or twice, are an input
//! error.

use std::path::PathBuf;

use ilgen_report::Report;

use crate::error::CliError;
use crate::exit;
use crate::output::{print_out, render, suppressions, Format};

#[derive(clap::Args, Clone, Debug)]
pub struct MergeArgs {
    /// The JSON reports of all shards of one `ilgen detect --shard I/N` analysis, in any order
    #[arg(required = true)]
    pub reports: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also list the candidates replay did not confirm, with the reason
    #[arg(long)]
    pub show_all: bool,
    /// A suppressions file, as for `ilgen detect` [default: ILGEN_OPTIONS=suppressions=FILE]
    #[arg(long, value_name = "FILE")]
    pub suppressions: Option<PathBuf>,
}

pub fn run(args: &MergeArgs) -> Result<i32, CliError> {
    let suppressions = suppressions(args.suppressions.as_deref())?;
    let parts = args
        .reports
        .iter()
        .map(|path| ilgen_report::json::read_shard(path).map_err(CliError::Input))
        .collect::<Result<Vec<_>, _>>()?;
    let mut report = Report::merge_shards(parts).map_err(|e| CliError::Input(e.to_string()))?;
    if let Some(s) = &suppressions {
        report.suppress(s);
    }
    print_out(&render(&report, args.format, args.show_all))?;
    Ok(if report.confirmed() {
        exit::FINDINGS
    } else {
        exit::CLEAN
    })
}
