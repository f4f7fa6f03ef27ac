// Suppressions in ThreadSanitizer's syntax and stable fingerprints. Two races: `a` between
// bump_a and main, `b` between bump_b and main. A file suppressing bump_a by function name
// leaves only the race on b (exit 66) and says what it hid; one suppressing both leaves nothing
// (exit 0), and --show-all lists both as suppressed; ILGEN_OPTIONS=suppressions=FILE does the same
// as the flag; TSan's other types get a note; a bad line is exit 2 naming the file and line.
// Two recordings of the same binary give each finding the same fingerprint.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace %t.trace2 && env ILGEN_OPTIONS=trace_dir=%t.trace %t && env ILGEN_OPTIONS=trace_dir=%t.trace2 %t
// RUN: printf '# known, fixed in the next release\n\nrace:^bump_a$\nrace_top:main\n' > %t.one
// RUN: sh -c '%ilgen detect --suppressions %t.one %t.trace 2>%t.one.err; echo "exit=$?"' | FileCheck --check-prefix=ONE %s
// RUN: FileCheck --check-prefix=NOTE %s < %t.one.err
// RUN: printf 'race:bump_a\n  race:suppressions_two_races.c  \n' > %t.both
// RUN: sh -c '%ilgen detect --show-all --suppressions %t.both %t.trace; echo "exit=$?"' | FileCheck --check-prefix=BOTH %s
// RUN: sh -c 'ILGEN_OPTIONS=suppressions=%t.both %ilgen detect %t.trace; echo "exit=$?"' | FileCheck --check-prefix=ENV %s
// RUN: sh -c '%ilgen detect --format json --suppressions %t.one %t.trace > %t.one.json; echo "exit=$?"' | FileCheck --check-prefix=EXIT66 %s
// RUN: python3 %S/Inputs/validate.py %S/Inputs/ilgen-report.schema.json %t.one.json | FileCheck %s --check-prefix=VALID
// RUN: python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["format_version"], [f["object"]["name"] for f in r["findings"]], [(s["suppression"], s["finding"]["object"]["name"]) for s in r["suppressed"]])' %t.one.json | FileCheck --check-prefix=JSON %s
// `ilgen replay` applies them too: its one finding suppressed, it exits 0 and says so.
// RUN: sh -c '%ilgen replay --suppressions %t.both %t.trace:1 2>/dev/null; echo "exit=$?"' | FileCheck --check-prefix=REPLAY %s
//
// RUN: printf 'race:bump_a\nrace-bump_b\n' > %t.bad
// RUN: sh -c '%ilgen detect --suppressions %t.bad %t.trace; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=BAD %s
// RUN: printf '\n# x\nracy:bump_b\n' > %t.bad2
// RUN: sh -c '%ilgen detect --suppressions %t.bad2 %t.trace; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=BAD2 %s
//
// RUN: sh -c '%ilgen detect --format json %t.trace > %t.1.json; test $? = 66'
// RUN: sh -c '%ilgen detect --format json %t.trace2 > %t.2.json; test $? = 66'
// RUN: python3 -c 'import json,sys; print(sorted((f["object"]["name"], f["fingerprint"]) for f in json.load(open(sys.argv[1]))["findings"]))' %t.1.json > %t.1.prints
// RUN: python3 -c 'import json,sys; print(sorted((f["object"]["name"], f["fingerprint"]) for f in json.load(open(sys.argv[1]))["findings"]))' %t.2.json > %t.2.prints
// RUN: diff %t.1.prints %t.2.prints
// RUN: FileCheck --check-prefix=PRINTS %s < %t.1.prints
// RUN: sh -c '%ilgen detect --format sarif %t.trace2 > %t.sarif; test $? = 66'
// RUN: python3 -c 'import json,sys; print(sorted(r["partialFingerprints"]["ilgenFindingHash/v1"] for r in json.load(open(sys.argv[1]))["runs"][0]["results"]))' %t.sarif > %t.sarif.prints
// RUN: python3 -c 'import json,sys; print(sorted(f["fingerprint"] for f in json.load(open(sys.argv[1]))["findings"]))' %t.1.json | diff - %t.sarif.prints
#include <pthread.h>

int a, b;

void *bump_a(void *arg) {
  a++;
  return arg;
}

void *bump_b(void *arg) {
  b++;
  return arg;
}

int main(void) {
  pthread_t t1, t2;
  pthread_create(&t1, NULL, bump_a, NULL);
  pthread_create(&t2, NULL, bump_b, NULL);
  a++;
  b++;
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  return 0;
}

// ONE:     WARNING: ilgen: data race
// ONE-DAG:     #0 bump_b {{.*}}suppressions_two_races.c:46:4
// ONE-DAG:     #0 main {{.*}}suppressions_two_races.c:55:4
// ONE:       Location is global 'b' of size 4
// ONE-NOT: WARNING
// ONE:     ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// ONE-NEXT: ilgen: suppressed: 1 (by pattern race:^bump_a$)
// ONE:     exit=66
// NOTE:    ilgen: {{.*}}.one:4: ilgen ignores `race_top:` suppressions (it reports no such finding)
//
// BOTH-NOT: WARNING
// BOTH:     ilgen: 0 finding(s) confirmed (deduplicated by source lines)
// BOTH-NEXT: ilgen: suppressed: 1 (by pattern race:bump_a)
// BOTH-NEXT: ilgen: suppressed: 1 (by pattern race:suppressions_two_races.c)
// BOTH-DAG: suppressed data race at {{.*}}suppressions_two_races.c:{{41|54}} and {{.*}}suppressions_two_races.c:{{41|54}} by race:bump_a
// BOTH-DAG: suppressed data race at {{.*}}suppressions_two_races.c:{{46|55}} and {{.*}}suppressions_two_races.c:{{46|55}} by race:suppressions_two_races.c
// BOTH:     exit=0
// ENV-NOT:  WARNING
// ENV:      ilgen: suppressed: 1 (by pattern race:bump_a)
// ENV:      exit=0
// EXIT66:   exit=66
// REPLAY-NOT: WARNING
// REPLAY:   ilgen: suppressed: 1 (by pattern race:{{bump_a|suppressions_two_races.c}})
// REPLAY:   exit=0
// JSON:     11 ['b'] [('race:^bump_a$', 'a')]
//
// BAD:      ilgen: error: {{.*}}.bad:2: `race-bump_b` has no `:`; a suppression is TYPE:PATTERN with TYPE race, deadlock or called_from_lib
// BAD-NEXT: exit=2
// BAD2:     ilgen: error: {{.*}}.bad2:3: unknown suppression type `racy`; a suppression is TYPE:PATTERN with TYPE race, deadlock or called_from_lib
// BAD2-NEXT: exit=2
// PRINTS:   [('a', '[[A:[0-9a-f]{16}]]'), ('b', '[[B:[0-9a-f]{16}]]')]
// VALID:    valid: ilgen report, format version 11
