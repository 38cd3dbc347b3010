#!/bin/sh
# SPDX-License-Identifier: MIT
# stats-fork.sh: runs stats_fork (1000 forks beside threads busy counting:
# no child stalls, none touches its parent's segment).  Under
# AddressSanitizer, without LeakSanitizer's check at each child's exit:
# a stop-the-world scan per child makes the run take minutes, and it can
# deadlock on an allocator lock that a parent thread held at the fork (a
# limit of the sanitizer in forked children of threaded programs, not of
# ltx).  The children's memory accesses are still checked.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS
exec ./stats_fork
