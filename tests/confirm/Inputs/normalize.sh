#!/bin/sh
# Replaces what may differ between two replays of one schedule: the pid and the addresses (ASLR).
sed -E 's/pid=[0-9]+/pid=PID/; s/0x[0-9a-f]+/0xADDR/g'
