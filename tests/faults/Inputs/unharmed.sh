#!/bin/sh
# unharmed.sh PLAIN RECORDED WORKDIR OPTIONS [SETUP]
#
# Runs the uninstrumented build PLAIN and the instrumented build RECORDED of one program, each in a
# fresh empty directory (WORKDIR/plain, WORKDIR/recorded), RECORDED with
# ILGEN_OPTIONS=trace_dir=trace:OPTIONS, both after the shell command SETUP (a ulimit, say).
# Prints "status <plain> <recorded>", "output same" or "output differs", then every file each run
# left (trace/ contents excluded), so that a test can check that recording changed nothing: the
# same exit status, the same output, no file written outside the trace directory.
plain=$1 recorded=$2 work=$3 options=$4 setup=${5:-true}
rm -rf "$work" && mkdir -p "$work/plain" "$work/recorded"
(cd "$work/plain" && eval "$setup" && "$plain" > ../plain.out 2>/dev/null); ps=$?
(cd "$work/recorded" && eval "$setup" && ILGEN_OPTIONS="trace_dir=trace:$options" "$recorded" > ../recorded.out 2>../recorded.err); rs=$?
echo "status $ps $rs"
if cmp -s "$work/plain.out" "$work/recorded.out"; then echo "output same"; else echo "output differs"; fi
echo "plain files: $(cd "$work/plain" && find . -mindepth 1 | sort | tr '\n' ' ')"
echo "recorded files: $(cd "$work/recorded" && find . -mindepth 1 -not -path './trace/*' | sort | tr '\n' ' ')"
