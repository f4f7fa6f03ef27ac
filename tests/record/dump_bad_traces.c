// `ilgen dump` on a trace it cannot read gives one message naming the file, saying what it is
// instead and what to do, and exit code 2, never a panic: a thread file cut inside a record, a
// directory that is no trace, a file or nothing where the directory should be, a meta.json and a
// thread file of another format version (older, newer, or no whole number at all), a FIFO or a
// symlink to /dev/zero in place of a thread file (refused at once, naming it), text or a program
// in place of a thread file, bytes after the end of the records, and a meta.json that is not JSON.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace %t.cut %t.foreign %t.v99 %t.v0 %t.vx %t.tv99 %t.tvmax %t.fifo %t.zero %t.text %t.elf %t.pad %t.json %t.flip %t.boundary
// RUN: env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck --check-prefix=GOOD %s
//
// Cut t0.trace 2 bytes into its first record (magic 8 + header 16 + length byte + 1).
// RUN: mkdir %t.cut && cp %t.trace/meta.json %t.cut/
// RUN: head -c 26 %t.trace/t0.trace > %t.cut/t0.trace
// RUN: sh -c '%ilgen dump %t.cut; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=CUT %s
// CUT:      ilgen: error: {{.*}}.cut/t0.trace is truncated at byte 24
// CUT-SAME: record the program again
// CUT-NEXT: exit=2
//
// RUN: mkdir %t.foreign && cp %s %t.foreign/
// RUN: sh -c '%ilgen dump %t.foreign; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=FOREIGN %s
// FOREIGN:      ilgen: error: {{.*}}.foreign is not an ilgen trace directory: it has no meta.json; pass a directory that an instrumented program wrote
// FOREIGN-NEXT: exit=2
// RUN: sh -c '%ilgen dump %s; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=FILE %s
// FILE:      ilgen: error: {{.*}}dump_bad_traces.c is not an ilgen trace directory: it is a file, not a directory
// FILE-NEXT: exit=2
//
// RUN: cp -r %t.trace %t.v99
// RUN: sed -i -e 's/"format_version": *[0-9]*/"format_version": 99/' %t.v99/meta.json
// RUN: sh -c '%ilgen dump %t.v99; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=V99 %s
// V99:      ilgen: error: {{.*}}.v99/meta.json has format version 99, newer than version {{[0-9]+}} that this ilgen reads; read it with the ilgen that wrote it, or record the program again with this one
// V99-NEXT: exit=2
//
// RUN: cp -r %t.trace %t.v0
// RUN: sed -i -e 's/"format_version": *[0-9]*/"format_version": 0/' %t.v0/meta.json
// RUN: sh -c '%ilgen dump %t.v0; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=V0 %s
// V0:      ilgen: error: {{.*}}.v0/meta.json has format version 0, older than version {{[0-9]+}} that this ilgen reads; record the program again with this ilgen
// V0-NEXT: exit=2
//
// A version that is no whole number gets its own message, whatever it is.
// RUN: cp -r %t.trace %t.vx
// RUN: sed -i -e 's/"format_version": *[0-9]*/"format_version": 3.5/' %t.vx/meta.json
// RUN: sh -c '%ilgen dump %t.vx; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=VX -DV=3.5 %s
// RUN: sed -i -e 's/"format_version": *3.5/"format_version": -1/' %t.vx/meta.json
// RUN: sh -c '%ilgen dump %t.vx; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=VX -DV=-1 %s
// RUN: sed -i -e 's/"format_version": *-1/"format_version": "3"/' %t.vx/meta.json
// RUN: sh -c '%ilgen dump %t.vx; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=VX '-DV="3"' %s
// VX:      ilgen: error: {{.*}}.vx/meta.json has format version [[V]], which no ilgen writes (versions are whole numbers); pass the file ilgen wrote, or record the program again
// VX-NEXT: exit=2
//
// The thread file's version is the u32 right after its 8-byte magic.
// RUN: cp -r %t.trace %t.tv99
// RUN: sh -c 'printf "\143" | dd of=%t.tv99/t0.trace bs=1 seek=8 conv=notrunc 2>/dev/null'
// RUN: sh -c '%ilgen dump %t.tv99; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=TV99 %s
// TV99:      ilgen: error: {{.*}}.tv99/t0.trace has format version 99
// TV99-NEXT: exit=2
// RUN: cp -r %t.trace %t.tvmax
// RUN: sh -c 'printf "\377\377\377\377" | dd of=%t.tvmax/t0.trace bs=1 seek=8 conv=notrunc 2>/dev/null'
// RUN: sh -c '%ilgen dump %t.tvmax; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=TVMAX %s
// TVMAX:      ilgen: error: {{.*}}.tvmax/t0.trace has format version 4294967295, newer than version {{[0-9]+}} that this ilgen reads
// TVMAX-NEXT: exit=2
//
// A FIFO would block a reader and /dev/zero would exhaust it: both are refused within the timeout.
// RUN: cp -r %t.trace %t.fifo && mkfifo %t.fifo/t1.trace
// RUN: sh -c 'timeout 5 %ilgen dump %t.fifo; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=FIFO %s
// FIFO:      ilgen: error: {{.*}}.fifo/t1.trace is a FIFO, not a regular file
// FIFO-NEXT: exit=2
// RUN: cp -r %t.trace %t.zero && ln -s /dev/zero %t.zero/t1.trace
// RUN: sh -c 'timeout 5 %ilgen dump %t.zero; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=ZERO %s
// ZERO:      ilgen: error: {{.*}}.zero/t1.trace is a symbolic link, not a regular file
// ZERO-NEXT: exit=2
//
// Something else under a thread file's name is named for what it is.
// RUN: cp -r %t.trace %t.text && cp %s %t.text/t0.trace
// RUN: sh -c '%ilgen dump %t.text; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=TEXT %s
// TEXT:      ilgen: error: {{.*}}.text/t0.trace is not an ilgen thread file: it is text, without the ILGENTHR magic; a trace directory holds only files the runtime wrote, record the program again
// TEXT-NEXT: exit=2
// RUN: cp -r %t.trace %t.elf && cp %t %t.elf/t0.trace
// RUN: sh -c '%ilgen dump %t.elf; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=ELF %s
// ELF:      ilgen: error: {{.*}}.elf/t0.trace is not an ilgen thread file: it is an ELF file (a program, library or object file), without the ILGENTHR magic
// ELF-NEXT: exit=2
//
// A nonzero byte after the zero length byte that ends the records: a cut record, not padding.
// RUN: cp -r %t.trace %t.pad && printf '\000\000\001' >> %t.pad/t0.trace
// RUN: sh -c '%ilgen dump %t.pad; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=PAD %s
// PAD:      ilgen: error: {{.*}}.pad/t0.trace is corrupt at byte {{[0-9]+}}: data after the end of the records
// PAD-NEXT: exit=2
//
// RUN: cp -r %t.trace %t.json && echo garbage > %t.json/meta.json
// RUN: sh -c '%ilgen dump %t.json; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=JSON %s
// JSON:      ilgen: error: {{.*}}.json/meta.json is not ilgen run metadata: it is not JSON
// JSON-NEXT: exit=2
//
// The run was sealed at exit: a byte flipped inside a record that stays well formed (the top byte
// of the first record's mutex address: another mutex) and a cut on a record boundary (after the
// header) read as records, but the checksum and length meta.json lists for the file refuse them.
// RUN: cp -r %t.trace %t.flip && sh -c 'printf "\001" | dd of=%t.flip/t0.trace bs=1 seek=52 conv=notrunc 2>/dev/null'
// RUN: sh -c '%ilgen dump %t.flip; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=FLIP %s
// FLIP:      ilgen: error: {{.*}}.flip/t0.trace was changed after recording (checksum mismatch); record again
// FLIP-NEXT: exit=2
// RUN: cp -r %t.trace %t.boundary && head -c 24 %t.trace/t0.trace > %t.boundary/t0.trace
// RUN: sh -c '%ilgen dump %t.boundary; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=BOUNDARY %s
// BOUNDARY:      ilgen: error: {{.*}}.boundary/t0.trace was changed after recording (it has 24 bytes, meta.json lists {{[0-9]+}}); record again
// BOUNDARY-NEXT: exit=2
//
// A missing directory is an input error too.
// RUN: sh -c '%ilgen dump %t.nonexistent; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=MISSING %s
// MISSING:      ilgen: error: {{.*}}.nonexistent is not an ilgen trace directory: it does not exist
// MISSING-NEXT: exit=2
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int g;

int main(void) {
  pthread_mutex_lock(&m);
  g = 1;
  pthread_mutex_unlock(&m);
  return 0;
}

// GOOD:      T0 thread main
// GOOD-NEXT: T0 lock m
// GOOD-NEXT: T0 write g
// GOOD-NEXT: T0 unlock m
