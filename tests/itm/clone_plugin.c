/* SPDX-License-Identifier: MIT */
/* A -fgnu-tm shared object for clone.c: its own clone table. */

/* The caller finds this through dlsym and calls it through a pointer in
 * a transaction: its clone must be looked up in this object's table. */
__attribute__((transaction_safe)) long plugin_add(long *p, long v)
{
	*p += v;
	return *p;
}
