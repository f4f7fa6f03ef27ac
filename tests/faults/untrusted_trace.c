// A trace is like a script: `detect` and `replay` run the program its meta.json names. They refuse
// (exit 2) a trace directory or file that group or others can write unless --trust-trace is given,
// print the exact command line of every replay they run, and never run a binary that is not the
// recorded one (ELF build id, ilgen's site table), here an uninstrumented program that
// would leave a marker file if it ever ran.
//
// RUN: %ilgen cc -g -O0 %s -o %t && %clang -g -O0 %s -o %t.plain -lpthread
// RUN: rm -rf %t.trace %t.gw %t.ow %t.edited %t.evil %t.marker && env ILGEN_OPTIONS=trace_dir=%t.trace %t
//
// The runtime recorded the executable's own ELF build id.
// RUN: sh -c 'llvm-readelf -n %t | sed -n "s/.*Build ID: //p"; sed -n "s/.*\"build_id\": \"\(.*\)\".*/\1/p" %t.trace/meta.json' | uniq -c | FileCheck --check-prefix=ID %s
// ID: 2 {{[0-9a-f]+$}}
//
// RUN: cp -r %t.trace %t.gw && chmod g+w %t.gw
// RUN: sh -c '%ilgen detect %t.gw; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=GW %s
// GW:      ilgen: error: {{.*}}.gw is writable by group or others (mode 720): whoever can write a trace chooses the program ilgen replays; record the program again yourself, or pass --trust-trace if you trust who wrote it
// GW-NEXT: exit=2
// RUN: sh -c '%ilgen detect --no-replay %t.gw > /dev/null; echo "exit=$?"' | FileCheck --check-prefix=NOREPLAY %s
// NOREPLAY: exit=66
// RUN: sh -c '%ilgen detect --trust-trace %t.gw > /dev/null; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=TRUSTED %s
// TRUSTED:      ilgen: replaying candidate 1: cd '{{.*}}' && ILGEN_OPTIONS='mode=replay:schedule={{.*}}.gw/schedule-1.json:outcome_dir={{.*}}.gw/replay-1' '{{.*}}untrusted_trace.c.tmp' (argv[0] '{{.*}}untrusted_trace.c.tmp')
// TRUSTED-NEXT: exit=66
//
// RUN: cp -r %t.gw %t.ow && chmod g-w %t.ow && chmod o+w %t.ow/meta.json
// RUN: sh -c '%ilgen replay %t.ow:1; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=OW %s
// OW:      ilgen: error: {{.*}}.ow/meta.json is writable by group or others (mode 602)
// OW-NEXT: exit=2
//
// meta.json edited to name the uninstrumented build: refused before anything runs, as changed
// after recording (the run was sealed at exit), and, rewritten whole without the seal (as a killed
// run's), because the binary is not the recorded one.
// RUN: cp -r %t.trace %t.edited && sed -i -e 's|"binary": ".*"|"binary": "%t.plain"|' %t.edited/meta.json
// RUN: sh -c 'MARK=%t.marker %ilgen detect %t.edited; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=EDITED %s
// EDITED:      ilgen: error: {{.*}}.edited/meta.json was changed after recording (checksum mismatch); record again
// EDITED-NEXT: exit=2
// RUN: cp -r %t.trace %t.evil && python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); del m["files"], m["checksum"]; m["binary"] = sys.argv[2]; json.dump(m, open(sys.argv[1], "w"), indent=2)' %t.evil/meta.json %t.plain
// RUN: sh -c 'MARK=%t.marker %ilgen detect %t.evil; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=EVIL %s
// EVIL:      ilgen: error: {{.*}}.plain is not the binary that was recorded (its build id is {{[0-9a-f]+}}, the trace says "{{[0-9a-f]+}}"): it was rebuilt or replaced since; record the program again
// EVIL-NEXT: exit=2
// RUN: test ! -e %t.marker
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int counter;

static void *bump(void *arg) {
  counter++;
  return arg;
}

int main(void) {
  if (getenv("MARK"))
    fclose(fopen(getenv("MARK"), "w"));
  pthread_t t;
  pthread_create(&t, NULL, bump, NULL);
  counter++;
  pthread_join(t, NULL);
  return 0;
}
