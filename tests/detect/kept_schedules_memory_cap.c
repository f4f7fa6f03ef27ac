// A thousand kept candidates, each with a long schedule, under a 96 MiB address-space cap: 1,000
// heap blocks that main reads after its 300 critical sections while a worker writes them after
// its own (one race per block; --all-sites and the default --max-candidates keep all 1,000).
// Every schedule runs from the start of the run through both threads' sections: 1,202 steps.
// The kept candidates held their schedules as steps (~64 bytes each): detect grew to 89 MB and
// ran out of memory under the cap (BS::thread_pool's test suite: 1,000 kept schedules of ~5*10^4
// steps, 3.6 GiB). Now a schedule is held as a cut of the observed order and made into steps
// only as it is written: 19 MB.
//
// RUN: %ilgen cc -g -O1 -DBLOCKS=1000 -DSECTIONS=300 %S/Inputs/blocks_after_sections.c -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c 'ulimit -v 98304 && %ilgen detect --no-replay --all-sites --format json %t.trace > %t.json; echo "exit=$?"' 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not="out of memory"
// RUN: grep -c '"kind": "race"' %t.json | FileCheck --check-prefix=RACES %s
// The schedules are written as replays need them (here: `ilgen replay` of the last).
// RUN: test ! -e %t.trace/schedule-1.json
// RUN: %ilgen replay --print-env %t.trace:1000 > /dev/null
// RUN: grep -c '"index"' %t.trace/schedule-1000.json | FileCheck --check-prefix=STEPS %s
// RUN: rm -rf %t.trace %t.json

// CHECK: exit=66
// RACES: 1000
// STEPS: 1202
