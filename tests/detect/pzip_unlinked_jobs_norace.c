// The parallel compressor benchmark app (benchmarks/apps/app_pzip.c), race-free: workers put
// finished jobs into a list kept sorted by sequence number, walking it under the list's lock
// (line 213); the writer pops the job it needs next off the head under that lock and recycles it
// onto a free list under the pool's lock (line 271). A model that kept each deciding read's
// writer before it, but let a later pop move before the read, put the writer's pop before a
// worker's walk that still reached the job: 3-11 race candidates per recording, most of them
// the walk's reads against the recycling write at 271, whose replays all followed the schedule
// and met no race. A later pop of what a walk read now stays after the walk: no candidate pairs
// the walk with the recycling in any of 5 recordings.
//
// RUN: %ilgen cc -g -O2 %S/../../benchmarks/apps/app_pzip.c -o %t
// RUN: bash -c 'for i in $(seq 5); do rm -rf %t.r && env ILGEN_OPTIONS=trace_dir=%t.r %t -w 3 -s 2048 -b 32 -j 8 -k 3 >/dev/null && echo "walk-recycle pairs: $(%ilgen detect --no-replay %t.r | grep -c "app_pzip.c:271 ")"; done' \
// RUN:   | sort | uniq -c | FileCheck %s
// CHECK: 5 walk-recycle pairs: 0
