#!/bin/sh
# SPDX-License-Identifier: MIT
# stats-start-fork.sh: runs stats_start_fork (200 forks right after a
# process's statistics started their refresh thread: no child stalls).
# The stall it guards against is a sanitizer's: under AddressSanitizer a
# fork that catches a thread while it starts leaves the child with the
# sanitizer's allocator lock held.  LeakSanitizer's check at each child's
# exit is left out (a stop-the-world scan per child makes the run slow);
# the children's memory accesses are still checked.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS
exec ./stats_start_fork
