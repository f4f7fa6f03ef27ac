// `ilgen detect --solver fdr` end to end with a stand-in for FDR's `refines` (FDR is proprietary
// and not installable here; Inputs/fake-fdr/refines answers in FDR's JSON shape for Listing 1
// models). ilgen must write one CSP_M file per check under TRACE/csp/, call `refines --format
// json --reveal-taus FILE`, map the counterexample (event ids, hidden events revealed) back to the
// native schedule, and give the same candidate as the native solver. Without `refines` on PATH
// it must say so and exit 2.
//
// RUN: %ilgen cc -g -O0 -I %testinc %S/../detect/listing1_race.c -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c 'PATH=%S/Inputs/fake-fdr:$PATH %ilgen detect --no-replay --solver fdr %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: test -f %t.trace/csp/deadlock.csp
// RUN: grep -q 'assert STOP \[T=' %t.trace/csp/var-*.csp
// RUN: sh -c 'env PATH=%t.nowhere %ilgen detect --no-replay --solver fdr %t.trace; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=NOFDR %s

// CHECK:      ilgen: 1 candidate(s): 1 race(s), 0 deadlock(s)
// CHECK:      candidate 1: data race on y
// CHECK-NEXT:   write by thread 0 at {{.*}}listing1_race.c:45 in main
// CHECK-NEXT:   write by thread 1 at {{.*}}listing1_race.c:36 in task
// CHECK-NEXT:   schedule:
// CHECK-NEXT:     thread 0: fork thread 1 at {{.*}}listing1_race.c:44 in main
// CHECK-NEXT:     thread 1: start
// CHECK-NEXT:     thread 1: lock m {{.*}}listing1_race.c:33 in task
// CHECK-NEXT:     thread 1: unlock m {{.*}}listing1_race.c:35 in task
// CHECK:      exit=66

// NOFDR: ilgen: error: --solver fdr needs FDR's `refines` on PATH, and none was found
// NOFDR: exit=2
