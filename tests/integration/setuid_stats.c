/* SPDX-License-Identifier: MIT */
/* setuid-env.sh's program: a few transactions, run set-user-ID root. */
#include <ltx/tm.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * setuid_stats [FILE]: with FILE, the program itself asks for statistics
 * and names FILE as the summary's destination (as a program passing its
 * user's input on would).  Prints its effective uid first, so that the
 * script can tell whether the set-user-ID bit took effect.
 */
int main(int argc, char **argv)
{
	static tm_word_t cell;

	printf("euid=%ld\n", (long)geteuid());
	fflush(stdout);
	if (argc > 1 && (tm_config_set("LTX_STATS", "1") != 0 ||
			 tm_config_set("LTX_STATS_FILE", argv[1]) != 0)) {
		perror("setuid_stats: tm_config_set");
		return 1;
	}
	for (int i = 0; i < 100; i++) {
		tm_st(&cell, tm_lt(&cell) + 1);
		if (!tm_commit())
			i--;
	}
	return cell == 100 ? 0 : 1;
}
