// evaluate.py's helgrind reader: a "Possible data race" report whose locks held are described
// first ("Lock at ... was first observed", with the stack of each lock's init) names the race by
// the access's stack and the conflicting one, not by the first frame of the whole report (which
// was the init of a lock, pool.c:76: s64 of Table 1 counted as a false report, s50 and s57 as
// races on neighbouring lines). Inputs/helgrind_lock_described_first.txt is the helgrind stderr
// of s64_pool_drain_outstanding_two_locks, the file renamed pool.c.
//
// RUN: python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import evaluate as ev; errs, other = ev.parse_helgrind(open(sys.argv[2]).read(), "pool.c"); print(ev.fmt_errs(errs), other)' %S/../../benchmarks %S/Inputs/helgrind_lock_described_first.txt | FileCheck %s
// CHECK: race 64 89 0
