//! Suppressions: a file in ThreadSanitizer's syntax that hides known findings.
//!
//! Takes the file's text (one `TYPE:PATTERN` a line; `#` comments and blank lines skipped, leading
//! and trailing white space ignored); gives [`Suppressions`], or a [`SuppressError`] naming the
//! file and line. The types ilgen applies are `race:` (a race whose either access, the line, a
//! library frame inlined there or a frame of its stack, or whose global variable matches),
//! `deadlock:` (a deadlock any of whose blocked operations or held locks' acquisitions matches,
//! with their stacks) and `called_from_lib:` (any
//! finding of a binary whose path matches: ilgen's sites are all in the recorded executable; the
//! only rule that hides an atomicity violation, which TSan has no type for). A
//! frame matches when its demangled function name or its source file path does. TSan's other
//! types (`race_top`, `thread`, `mutex`, `signal`) are accepted, each with a note that ilgen
//! ignores it. A pattern is TSan's: a substring match (a `*` is implied at both ends) in which
//! `*` matches any run of characters, a leading `^` anchors at the start and a trailing `$` at the
//! end. [`Report::suppress`] moves the findings a rule matches into [`Report::suppressed`], with
//! the rule, so that nothing disappears silently.

use std::fmt;

use crate::{Finding, Location, Report, Source, Suppressed};

/// What a rule hides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Race,
    Deadlock,
    CalledFromLib,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Rule {
    kind: Kind,
    pattern: String,
    /// The line as written (`race:^worker$`), to say which rule hid a finding.
    text: String,
}

/// The rules of one suppressions file, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Suppressions {
    rules: Vec<Rule>,
    /// One line per rule of a TSan type ilgen does not apply (`file:line: ...`), for stderr.
    pub notes: Vec<String>,
}

/// A line of a suppressions file that is not `TYPE:PATTERN` with a known type.
#[derive(Debug, PartialEq, Eq)]
pub struct SuppressError {
    pub path: String,
    pub line: usize,
    pub what: String,
}

impl fmt::Display for SuppressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}; a suppression is TYPE:PATTERN with TYPE race, deadlock or \
             called_from_lib",
            self.path, self.line, self.what
        )
    }
}

/// TSan's types that ilgen has no finding for.
const IGNORED: [&str; 4] = ["race_top", "thread", "mutex", "signal"];

impl Suppressions {
    /// Parses the text of the file at `path` (named in errors and notes only).
    pub fn parse(path: &str, text: &str) -> Result<Suppressions, SuppressError> {
        let mut out = Suppressions::default();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let err = |what: String| SuppressError {
                path: path.to_owned(),
                line: i + 1,
                what,
            };
            let Some((kind, pattern)) = line.split_once(':') else {
                return Err(err(format!("`{line}` has no `:`")));
            };
            if pattern.is_empty() {
                return Err(err(format!("`{line}` has an empty pattern")));
            }
            let kind = match kind {
                "race" => Kind::Race,
                "deadlock" => Kind::Deadlock,
                "called_from_lib" => Kind::CalledFromLib,
                k if IGNORED.contains(&k) => {
                    out.notes.push(format!(
                        "{path}:{}: ilgen ignores `{k}:` suppressions (it reports no such \
                         finding)",
                        i + 1
                    ));
                    continue;
                }
                k => return Err(err(format!("unknown suppression type `{k}`"))),
            };
            out.rules.push(Rule {
                kind,
                pattern: pattern.to_owned(),
                text: line.to_owned(),
            });
        }
        Ok(out)
    }

    /// The first rule that hides `f` of `binary`, as written.
    fn matching(&self, f: &Finding, binary: &str) -> Option<&str> {
        let strings = strings(f);
        self.rules
            .iter()
            .find(|r| match (r.kind, f) {
                (Kind::CalledFromLib, _) => matches(&r.pattern, binary),
                (Kind::Race, Finding::Race(_)) | (Kind::Deadlock, Finding::Deadlock(_)) => {
                    strings.iter().any(|s| matches(&r.pattern, s))
                }
                _ => false,
            })
            .map(|r| r.text.as_str())
    }
}

impl Report {
    /// Moves every finding a rule of `s` matches into [`Report::suppressed`].
    pub fn suppress(&mut self, s: &Suppressions) {
        let (hidden, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.findings)
            .into_iter()
            .map(|f| (s.matching(&f, &self.binary).map(str::to_owned), f))
            .partition(|(rule, _)| rule.is_some());
        self.findings = kept.into_iter().map(|(_, f)| f).collect();
        self.suppressed
            .extend(hidden.into_iter().filter_map(|(rule, finding)| {
                Some(Suppressed {
                    suppression: rule?,
                    finding,
                })
            }));
    }

    /// `(rule, findings it hid)`, by rule.
    pub fn suppressed_by_rule(&self) -> Vec<(&str, usize)> {
        let mut out: Vec<(&str, usize)> = Vec::new();
        for s in &self.suppressed {
            match out.iter_mut().find(|(r, _)| *r == s.suppression) {
                Some((_, n)) => *n += 1,
                None => out.push((&s.suppression, 1)),
            }
        }
        // By rule: the findings come in the order their replays finished, which varies.
        out.sort_unstable();
        out
    }
}

/// What a `race:` or `deadlock:` pattern is matched against: every frame's function and file
/// (each location's, the library frames inlined there, and those of its stack, as TSan matches
/// every frame of the report's stacks; a frame of uninstrumented code's function and module),
/// and a race's global variable.
fn strings<'a>(f: &'a Finding) -> Vec<&'a str> {
    let framed = |l: &'a Location, stack: &'a [Location]| std::iter::once(l).chain(stack);
    let locations: Vec<&Location> = match f {
        Finding::Race(r) => framed(&r.current.location, &r.current.stack)
            .chain(framed(&r.previous.location, &r.previous.stack))
            .collect(),
        Finding::Deadlock(d) => d
            .blocked
            .iter()
            .flat_map(|b| {
                framed(&b.location, &b.stack)
                    .chain(b.holds.iter().flat_map(|h| framed(&h.location, &h.stack)))
            })
            .collect(),
        Finding::Atomicity(a) => vec![
            &a.transaction,
            &a.e1.location,
            &a.f.location,
            &a.e2.location,
        ],
    };
    let mut out = Vec::new();
    for n in locations.iter().filter_map(|l| l.native.as_deref()) {
        out.extend(n.function.as_deref());
        out.push(&n.module);
    }
    for s in locations.iter().filter_map(|l| l.source.as_deref()) {
        for frame in std::iter::once(s).chain(&s.inlined) {
            let Source { function, file, .. } = frame;
            out.extend([function.as_str(), file.as_str()]);
        }
    }
    if let Finding::Race(r) = f {
        out.extend(r.object.as_ref().map(|o| o.name.as_str()));
    }
    out
}

/// TSan's pattern match: `*` is any run of characters, `^` at the start and `$` at the end anchor,
/// anything else matches a substring; an empty string matches nothing (as in TSan).
pub fn matches(pattern: &str, s: &str) -> bool {
    if s.is_empty() {
        return false;
    }
    let (start, p) = match pattern.strip_prefix('^') {
        Some(p) => (true, p),
        None => (false, pattern),
    };
    let (end, p) = match p.strip_suffix('$') {
        Some(p) => (true, p),
        None => (false, p),
    };
    let parts: Vec<&str> = p.split('*').collect();
    let (first, rest) = parts.split_first().expect("split gives one part at least");
    let mut at = if start {
        if !s.starts_with(first) {
            return false;
        }
        first.len()
    } else {
        match s.find(first) {
            Some(i) => i + first.len(),
            None => return false,
        }
    };
    let Some((last, middle)) = rest.split_last() else {
        // No `*`: one piece, which an end anchor ties to the end (and a start anchor to both).
        return !end
            || (if start {
                s.len() == first.len()
            } else {
                s.ends_with(first)
            });
    };
    for part in middle {
        match s[at..].find(part) {
            Some(i) => at += i + part.len(),
            None => return false,
        }
    }
    // The last piece: at the end when anchored, else anywhere after the others.
    if end {
        s.len() - at >= last.len() && s.ends_with(last)
    } else {
        s[at..].contains(last)
    }
}
