//! Which functions get memory instrumentation, and which are atomic blocks.
//!
//! Takes the `-mllvm -ilgen-exclude=`/`-ilgen-include=` strings (from the C++ glue) and the
//! `ILGEN_PASS_OPTIONS` environment variable (`exclude=fun:helper_*,src:*/vendor/*;include=fun:worker`);
//! gives [`Filter`], which answers "instrument this function's memory accesses?", and, from
//! `atomic=fun:GLOB,...`, "is this function an atomic block?" (as if marked `ILGEN_ATOMIC`:
//! marking by name without touching the source). Patterns are
//! sanitizer-ignorelist style: `fun:GLOB` matches the function's symbol name (mangled for C++),
//! `src:GLOB` the module's source file name. Synchronization calls are rewritten regardless: a
//! missed lock would make every later report wrong. `stacks=0` leaves out the shadow-stack hooks
//! (`stacks`), for the pass tests that pin the other instrumentation line by line; `calls=0` the
//! call markers (`call_markers`), which cost a call per call of a function that synchronizes
//! even when the run records no calls; `cover=0` the coverage checks inlined before plain
//! accesses (`instrument::guard`), for the pass tests that pin each hook next to its access.

use glob::Pattern;

/// Environment variable read at pass time.
pub const ENV: &str = "ILGEN_PASS_OPTIONS";

#[derive(Debug, Clone)]
enum Rule {
    Fun(Pattern),
    Src(Pattern),
}

impl Rule {
    fn matches(&self, function: &str, sources: &[String]) -> bool {
        match self {
            Rule::Fun(p) => p.matches(function),
            Rule::Src(p) => sources.iter().any(|s| p.matches(s)),
        }
    }
}

/// Include and exclude rules. A function is instrumented when it matches no exclude rule and,
/// if there are include rules, at least one of them.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    include: Vec<Rule>,
    exclude: Vec<Rule>,
    /// Functions that are atomic blocks (`fun:` patterns only).
    atomic: Vec<Pattern>,
    /// `stacks=0`: no shadow-stack hooks.
    pub no_stacks: bool,
    /// `calls=0`: no call markers (`call_markers`).
    pub no_calls: bool,
    /// `cover=0`: every plain access calls its hook, no inlined coverage check.
    pub no_cover: bool,
    /// Malformed entries, reported once by the caller (a pass must not abort the compiler).
    pub errors: Vec<String>,
}

impl Filter {
    /// Builds the filter from the glue's `-mllvm` strings and the environment.
    pub fn from_sources(exclude_flag: &str, include_flag: &str, env: Option<&str>) -> Filter {
        let mut f = Filter::default();
        f.add_list(exclude_flag, false);
        f.add_list(include_flag, true);
        if let Some(env) = env {
            f.add_env(env);
        }
        f
    }

    /// `exclude=LIST;include=LIST;atomic=LIST;stacks=0|1;calls=0|1;cover=0|1` (each part optional, any
    /// order).
    fn add_env(&mut self, env: &str) {
        for part in env.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            match part.split_once('=') {
                Some(("exclude", list)) => self.add_list(list, false),
                Some(("include", list)) => self.add_list(list, true),
                Some(("atomic", list)) => self.add_atomic(list),
                Some(("stacks", "0")) => self.no_stacks = true,
                Some(("stacks", "1")) => self.no_stacks = false,
                Some(("calls", "0")) => self.no_calls = true,
                Some(("calls", "1")) => self.no_calls = false,
                Some(("cover", "0")) => self.no_cover = true,
                Some(("cover", "1")) => self.no_cover = false,
                _ => self.errors.push(format!(
                    "{ENV}: expected exclude=..., include=..., atomic=..., stacks=0|1, \
                     calls=0|1 or cover=0|1, got `{part}`"
                )),
            }
        }
    }

    /// `fun:GLOB,src:GLOB,...`
    fn add_list(&mut self, list: &str, include: bool) {
        for item in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let rule = match item.split_once(':') {
                Some(("fun", glob)) => Pattern::new(glob).map(Rule::Fun),
                Some(("src", glob)) => Pattern::new(glob).map(Rule::Src),
                _ => {
                    self.errors
                        .push(format!("pattern `{item}` is neither fun:GLOB nor src:GLOB"));
                    continue;
                }
            };
            match rule {
                Ok(rule) if include => self.include.push(rule),
                Ok(rule) => self.exclude.push(rule),
                Err(e) => self.errors.push(format!("bad glob in `{item}`: {e}")),
            }
        }
    }

    /// `fun:GLOB,...`: the atomic blocks.
    fn add_atomic(&mut self, list: &str) {
        for item in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some(glob) = item.strip_prefix("fun:") else {
                self.errors
                    .push(format!("atomic pattern `{item}` is not fun:GLOB"));
                continue;
            };
            match Pattern::new(glob) {
                Ok(p) => self.atomic.push(p),
                Err(e) => self.errors.push(format!("bad glob in `{item}`: {e}")),
            }
        }
    }

    /// Whether `function` (symbol name) is an atomic block by `atomic=`.
    pub fn atomic(&self, function: &str) -> bool {
        self.atomic.iter().any(|p| p.matches(function))
    }

    /// Whether `function` (symbol name), whose source file names are `sources`, gets memory
    /// instrumentation.
    pub fn instruments(&self, function: &str, sources: &[String]) -> bool {
        if self.exclude.iter().any(|r| r.matches(function, sources)) {
            return false;
        }
        self.include.is_empty() || self.include.iter().any(|r| r.matches(function, sources))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(s: &str) -> Vec<String> {
        vec![s.to_owned()]
    }

    #[test]
    fn inlined_coverage_checks_are_on_unless_turned_off() {
        assert!(!Filter::from_sources("", "", None).no_cover);
        assert!(Filter::from_sources("", "", Some("cover=0")).no_cover);
        assert!(!Filter::from_sources("", "", Some("cover=0;cover=1")).no_cover);
    }

    #[test]
    fn stacks_are_on_unless_turned_off() {
        assert!(!Filter::from_sources("", "", None).no_stacks);
        assert!(Filter::from_sources("", "", Some("stacks=0")).no_stacks);
        let bad = Filter::from_sources("", "", Some("stacks=no"));
        assert!(!bad.no_stacks);
        assert_eq!(bad.errors.len(), 1, "{:?}", bad.errors);
    }

    #[test]
    fn empty_filter_instruments_everything() {
        let f = Filter::from_sources("", "", None);
        assert!(f.instruments("main", &src("a.c")));
        assert!(f.errors.is_empty());
    }

    #[test]
    fn env_and_flags_combine() {
        let f = Filter::from_sources(
            "fun:skip_me",
            "",
            Some("exclude=fun:helper_*,src:*/vendor/*;include=fun:worker*,fun:helper_x"),
        );
        assert!(f.instruments("worker1", &src("src/a.c")));
        assert!(!f.instruments("main", &src("src/a.c")), "not included");
        assert!(!f.instruments("helper_x", &src("src/a.c")), "exclude wins");
        assert!(!f.instruments("worker1", &src("lib/vendor/z.c")));
        assert!(f.errors.is_empty());
    }

    #[test]
    fn atomic_functions_by_name() {
        let f = Filter::from_sources(
            "",
            "",
            Some("atomic=fun:withdraw*,fun:_ZN4Bank*;include=fun:w*"),
        );
        assert!(f.atomic("withdraw_all"));
        assert!(f.atomic("_ZN4Bank8transferEv"));
        assert!(!f.atomic("deposit"));
        assert!(
            f.instruments("withdraw_all", &src("a.c")),
            "atomic= is not include="
        );
        let bad = Filter::from_sources("", "", Some("atomic=src:a.c,fun:["));
        assert_eq!(bad.errors.len(), 2, "{:?}", bad.errors);
    }

    #[test]
    fn malformed_entries_are_errors_not_panics() {
        let f = Filter::from_sources("foo,fun:[", "", Some("bogus"));
        assert_eq!(f.errors.len(), 3, "{:?}", f.errors);
        assert!(f.instruments("main", &src("a.c")));
    }
}
