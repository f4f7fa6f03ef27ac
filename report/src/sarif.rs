//! The SARIF 2.1.0 report (`--format sarif`), for code-scanning services and IDEs.
//!
//! One run; `tool.driver` names ilgen with three rules whose ids never change: [`RULE_RACE`],
//! [`RULE_DEADLOCK`] and [`RULE_ATOMICITY`] (`locations` is e2, `relatedLocations` e1, f and
//! where the transaction began). Each confirmed finding is one result of level `error`:
//! `locations` is the current access (or the first blocked operation), `relatedLocations` the
//! previous access, where each lock held at either access was acquired (`'m' held by T1 at the
//! write, acquired here`) and the threads' creation sites (or the other blocked operations and
//! the held locks' acquisitions; for a race on heap memory, where its block was allocated, which
//! the message names too), and
//! `codeFlows[0].threadFlows` the schedule that exposed it (its last steps, as the report keeps
//! them): one thread flow per thread, each
//! location with its global `executionOrder` (1-based step number), the racing accesses or blocked
//! operations last. Unconfirmed candidates are not results. `artifactLocation.uri` is a `file://`
//! URI of the absolute source path; a location's `logicalLocations` names its function, demangled,
//! with the linkage name as `decoratedName` when the two differ. `properties` hold the replay's
//! `pid` and `replayDir`, `run` (the run whose schedule it is), `runs` (the runs that predicted it)
//! and `traceDir` (run `run`'s trace, for `ilgen replay traceDir:N`); with several runs the
//! message says them too. `partialFingerprints` holds the finding's fingerprint under
//! [`fingerprint::SARIF_KEY`]. A finding a suppressions file hid is a result too, after the
//! others, with `suppressions` (kind `external`, the rule as the justification). `stacks` hold the
//! frames of each access, held lock's acquisition (or blocked operation) and heap block's
//! allocation, numbered as the text report numbers them; a frame of uninstrumented code has the
//! library's file name as `module`, its `address.relativeAddress` (the offset the text report
//! prints) and, when a symbol names it, the function as a logical location.

use std::collections::BTreeMap;

use ilgen_trace::site_text;
use serde_json::{json, Value};

use crate::{fingerprint, Finding, Held, Location, Native, Report, Run, Schedule, Source};

pub const RULE_RACE: &str = "ilgen/data-race";
pub const RULE_DEADLOCK: &str = "ilgen/deadlock";
pub const RULE_ATOMICITY: &str = "ilgen/atomicity-violation";
pub const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

pub fn render(report: &Report) -> String {
    let mut results: Vec<Value> = report
        .findings
        .iter()
        .map(|f| result(f, &report.runs))
        .collect();
    for s in &report.suppressed {
        let mut v = result(&s.finding, &report.runs);
        v["suppressions"] = json!([{"kind": "external", "justification": s.suppression}]);
        results.push(v);
    }
    let log = json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "ilgen",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/ilgen/ilgen",
                "rules": [
                    {
                        "id": RULE_RACE,
                        "name": "DataRace",
                        "shortDescription": {"text": "Data race confirmed by replay"},
                        "fullDescription": {"text": "Two threads access the same memory without \
                            synchronization, at least one of them writes; a replay of the \
                            recorded program under the predicted schedule observed it."},
                        "defaultConfiguration": {"level": "error"}
                    },
                    {
                        "id": RULE_DEADLOCK,
                        "name": "Deadlock",
                        "shortDescription": {"text": "Deadlock confirmed by replay"},
                        "fullDescription": {"text": "Every live thread blocked in a \
                            synchronization operation (for example a lock-order inversion); a \
                            replay of the recorded program under the predicted schedule reached \
                            it."},
                        "defaultConfiguration": {"level": "error"}
                    },
                    {
                        "id": RULE_ATOMICITY,
                        "name": "AtomicityViolation",
                        "shortDescription": {"text": "Atomicity violation confirmed by replay"},
                        "fullDescription": {"text": "Another thread's access to the same \
                            variable ran between two accesses of one atomic block (ILGEN_ATOMIC), \
                            conflicting with both; a replay of the recorded program under the \
                            predicted schedule ran the three in that order."},
                        "defaultConfiguration": {"level": "error"}
                    }
                ]
            }},
            "results": results
        }]
    });
    format!(
        "{}\n",
        serde_json::to_string_pretty(&log).expect("sarif serializes")
    )
}

fn physical(l: &Location, message: Option<String>) -> Value {
    let (mut v, text) = match (&l.source, &l.native) {
        (Some(s), _) => (source(s), None),
        (None, Some(n)) => (native(n), Some(n.text())),
        // Without the binary only the site id is known: a location with a message only.
        (None, None) => (json!({}), None),
    };
    let text = message.or(text).unwrap_or_else(|| site_text(l.site));
    v["message"] = json!({ "text": text });
    v
}

/// A frame of uninstrumented code: its address in the module, and the function when named.
fn native(n: &Native) -> Value {
    let mut v = json!({"physicalLocation": {
        "address": {"relativeAddress": n.offset, "kind": "instruction"}
    }});
    if let Some(f) = &n.function {
        let mut function = json!({"name": f, "kind": "function"});
        if let Some(symbol) = &n.symbol {
            function["decoratedName"] = json!(symbol);
        }
        v["logicalLocations"] = json!([function]);
    }
    v
}

fn source(s: &Source) -> Value {
    let mut function = json!({"name": s.function, "kind": "function"});
    if let Some(symbol) = &s.symbol {
        function["decoratedName"] = json!(symbol);
    }
    json!({"physicalLocation": {
        "artifactLocation": {"uri": uri(&s.file)},
        "region": {"startLine": s.line.max(1), "startColumn": s.column.max(1)}
    },
    "logicalLocations": [function]})
}

/// A SARIF `stack`: the frames of `l` (its own, then the library frames inlined at it) and of
/// each of `below`, as the text report numbers them.
fn stack(message: String, l: &Location, below: &[Location]) -> Value {
    let mut frames = Vec::new();
    for l in std::iter::once(l).chain(below) {
        match &l.source {
            Some(s) => frames.extend(
                std::iter::once(s.as_ref())
                    .chain(&s.inlined)
                    .map(|f| json!({"location": source(f)})),
            ),
            None => {
                let mut frame = json!({"location": physical(l, None)});
                if let Some(n) = &l.native {
                    frame["module"] = json!(n.module.rsplit('/').next().unwrap_or(&n.module));
                }
                frames.push(frame);
            }
        }
    }
    json!({"message": {"text": message}, "frames": frames})
}

fn uri(file: &str) -> String {
    if file.starts_with('/') {
        format!("file://{}", file.replace(' ', "%20"))
    } else {
        file.replace(' ', "%20")
    }
}

fn thread_flows(schedule: &Schedule, last: &[(u32, &Location, String)]) -> Value {
    let mut flows: BTreeMap<u32, Vec<Value>> = BTreeMap::new();
    // Steps keep their numbers in the whole schedule, of which the report holds the last.
    let mut order = schedule.first_shown() - 1;
    for s in &schedule.last {
        order += 1;
        let mut text = format!("T{} {}", s.tid, s.op);
        if let Some(p) = s.peer {
            text.push_str(&format!(" T{p}"));
        }
        if let Some(o) = &s.object_name {
            text.push_str(&format!(" {}", o.name));
        }
        flows.entry(s.tid).or_default().push(json!({
            "location": physical(&s.location, Some(text)),
            "executionOrder": order,
        }));
    }
    for (tid, l, text) in last {
        order += 1;
        flows.entry(*tid).or_default().push(json!({
            "location": physical(l, Some(text.clone())),
            "executionOrder": order,
            "importance": "essential",
        }));
    }
    let flows: Vec<Value> = flows
        .into_iter()
        .map(|(tid, locations)| {
            json!({
                "id": format!("T{tid}"),
                "message": {"text": format!("thread T{tid}")},
                "locations": locations
            })
        })
        .collect();
    json!([{ "threadFlows": flows }])
}

fn result(f: &Finding, all: &[Run]) -> Value {
    let mut v = finding(f);
    let (run, runs) = match f {
        Finding::Race(r) => (r.run, &r.runs),
        Finding::Deadlock(d) => (d.run, &d.runs),
        Finding::Atomicity(a) => (a.run, &a.runs),
    };
    let trace = run.checked_sub(1).and_then(|i| all.get(i));
    v["partialFingerprints"] = json!({fingerprint::SARIF_KEY: f.fingerprint()});
    v["properties"]["run"] = json!(run);
    v["properties"]["runs"] = json!(runs);
    v["properties"]["traceDir"] = json!(trace.map(|t| t.trace_dir.as_str()));
    if all.len() > 1 {
        if let Some(Value::String(text)) = v.pointer_mut("/message/text") {
            text.push_str(&format!(
                "; predicted in runs {} (of {}), run {run}'s schedule",
                numbers(runs),
                all.len()
            ));
        }
    }
    v
}

fn finding(f: &Finding) -> Value {
    match f {
        Finding::Race(r) => {
            let var = match (&r.object, &r.heap_block) {
                (Some(o), _) => format!("'{}'", o.name),
                (None, Some(b)) => format!(
                    "{:#x} (heap block of size {} at {:#x} allocated by T{})",
                    r.current.addr, b.size, b.address, b.thread
                ),
                (None, None) => format!("{:#x}", r.current.addr),
            };
            let cur = format!(
                "{} of size {} by T{}",
                r.current.kind.text(),
                r.current.size,
                r.current.tid
            );
            let prev = format!(
                "previous {} of size {} by T{}",
                r.previous.kind.text(),
                r.previous.size,
                r.previous.tid
            );
            let mut related = vec![physical(&r.previous.location, Some(prev.clone()))];
            related[0]["id"] = json!(1);
            for t in &r.threads {
                if let Some(at) = &t.created_at {
                    let mut v = physical(at, Some(format!("thread T{} created here", t.tid)));
                    v["id"] = json!(related.len() + 1);
                    related.push(v);
                }
            }
            let mut stacks = vec![
                stack(cur.clone(), &r.current.location, &r.current.stack),
                stack(prev.clone(), &r.previous.location, &r.previous.stack),
            ];
            for (a, which) in [(&r.current, ""), (&r.previous, "previous ")] {
                for h in &a.locks {
                    let acquired = format!(
                        "{} held by T{} at the {which}{}, acquired here",
                        lock(h),
                        a.tid,
                        a.kind.text()
                    );
                    let mut v = physical(&h.location, Some(acquired.clone()));
                    v["id"] = json!(related.len() + 1);
                    related.push(v);
                    stacks.push(stack(acquired, &h.location, &h.stack));
                }
            }
            if let Some(b) = &r.heap_block {
                let allocated = format!("heap block of size {} allocated by T{}", b.size, b.thread);
                let mut v = physical(&b.location, Some(allocated.clone()));
                v["id"] = json!(related.len() + 1);
                related.push(v);
                stacks.push(stack(allocated, &b.location, &b.stack));
            }
            json!({
                "ruleId": RULE_RACE,
                "ruleIndex": 0,
                "level": "error",
                "message": {"text": format!(
                    "Data race on {var}: {cur} races with the [{prev}](1) (confirmed by replay, \
                     candidate {})", numbers(&r.candidates))},
                "locations": [physical(&r.current.location, Some(cur.clone()))],
                "relatedLocations": related,
                "stacks": stacks,
                "codeFlows": thread_flows(&r.schedule, &[
                    (r.previous.tid, &r.previous.location, prev),
                    (r.current.tid, &r.current.location, cur),
                ]),
                "properties": {"pid": r.pid, "replayDir": r.replay_dir}
            })
        }
        Finding::Deadlock(d) => {
            let text = |b: &crate::Blocked| {
                let obj = b
                    .object_name
                    .as_ref()
                    .map_or_else(|| format!("{:#x}", b.object), |o| format!("'{}'", o.name));
                format!("T{} blocked in {} of {obj}", b.tid, b.op)
            };
            let mut related = Vec::new();
            let mut stacks = Vec::new();
            for b in d.blocked.iter().skip(1) {
                related.push(physical(&b.location, Some(text(b))));
            }
            for b in &d.blocked {
                stacks.push(stack(text(b), &b.location, &b.stack));
                for h in &b.holds {
                    let acquired = format!("T{} acquired {} here", b.tid, lock(h));
                    stacks.push(stack(acquired.clone(), &h.location, &h.stack));
                    related.push(physical(&h.location, Some(acquired)));
                }
            }
            for (i, v) in related.iter_mut().enumerate() {
                v["id"] = json!(i + 1);
            }
            let last: Vec<(u32, &Location, String)> = d
                .blocked
                .iter()
                .map(|b| (b.tid, &b.location, text(b)))
                .collect();
            let all: Vec<String> = d.blocked.iter().map(text).collect();
            let first = d.blocked.first();
            let how = match (d.observed, d.candidates.is_empty()) {
                (true, true) => "observed in the recorded run".to_owned(),
                (true, false) => format!(
                    "observed in the recorded run, confirmed by replay, candidate {}",
                    numbers(&d.candidates)
                ),
                (false, _) => format!("confirmed by replay, candidate {}", numbers(&d.candidates)),
            };
            json!({
                "ruleId": RULE_DEADLOCK,
                "ruleIndex": 1,
                "level": "error",
                "message": {"text": format!("Deadlock: {} ({how})", all.join("; "))},
                "locations": first.map(|b| vec![physical(&b.location, Some(text(b)))])
                    .unwrap_or_default(),
                "relatedLocations": related,
                "stacks": stacks,
                "codeFlows": thread_flows(&d.schedule, &last),
                "properties": {"pid": d.pid, "replayDir": d.replay_dir, "cycle": d.cycle,
                    "observed": d.observed}
            })
        }
        Finding::Atomicity(a) => {
            let var = a
                .object
                .as_ref()
                .map_or_else(|| format!("{:#x}", a.e1.addr), |o| format!("'{}'", o.name));
            let text = |role: &str, x: &crate::Access| {
                format!("{role}: {} of size {} by T{}", x.kind.text(), x.size, x.tid)
            };
            let (e1, f, e2) = (text("e1", &a.e1), text("f", &a.f), text("e2", &a.e2));
            let mut related = vec![
                physical(&a.e1.location, Some(e1.clone())),
                physical(&a.f.location, Some(f.clone())),
                physical(&a.transaction, Some("the transaction began here".into())),
            ];
            for (i, v) in related.iter_mut().enumerate() {
                v["id"] = json!(i + 1);
            }
            json!({
                "ruleId": RULE_ATOMICITY,
                "ruleIndex": 2,
                "level": "error",
                "message": {"text": format!(
                    "Atomicity violation on {var}, {}: [{f}](2) ran between the transaction's \
                     [{e1}](1) and {e2} ({}; confirmed by replay, candidate {})",
                    a.pattern.text(), a.pattern.meaning(), numbers(&a.candidates))},
                "locations": [physical(&a.e2.location, Some(e2.clone()))],
                "relatedLocations": related,
                "codeFlows": thread_flows(&a.schedule, &[
                    (a.e1.tid, &a.e1.location, e1),
                    (a.f.tid, &a.f.location, f),
                    (a.e2.tid, &a.e2.location, e2),
                ]),
                "properties": {"pid": a.pid, "replayDir": a.replay_dir, "pattern": a.pattern}
            })
        }
    }
}

/// `'m'`, or the lock's address when no global names it.
fn lock(h: &Held) -> String {
    h.object_name
        .as_ref()
        .map_or_else(|| format!("{:#x}", h.object), |o| format!("'{}'", o.name))
}

fn numbers(n: &[usize]) -> String {
    n.iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
