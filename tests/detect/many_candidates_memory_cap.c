// Thousands of candidates, each with a long schedule, under an address-space cap: 3,000 heap
// blocks that main reads after its 5,000 critical sections while a worker writes them after its
// own (one race per block, --all-sites keeps each). Every schedule runs through both threads'
// sections, about 20,000 steps. The analysis held every unit's candidates until the end and only
// then cut them to --max-candidates: BS::thread_pool's test suite made detect grow to 24 GiB
// and be killed by the kernel, and this run ran out of memory under a 512 MiB cap. Now a
// keeper holds no more than the cap as units finish: the first 10 (one per block) are written and
// the others counted (detect now passes under 128 MiB; the cap was 512).
//
// RUN: %ilgen cc -g -O1 -DBLOCKS=3000 -DSECTIONS=5000 %S/Inputs/blocks_after_sections.c -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c 'ulimit -v 262144 && %ilgen detect --no-replay --all-sites --max-candidates 10 %t.trace; echo "exit=$?"' 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not="out of memory"

// CHECK:      ilgen: 10 candidate(s): 10 race(s), 0 deadlock(s)
// CHECK:      ilgen: 2990 more candidates not written, raise --max-candidates (now 10)
// CHECK:      exit=66
