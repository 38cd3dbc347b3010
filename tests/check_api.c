/* SPDX-License-Identifier: MIT */
/* Single-thread semantics of the public API. */
#include <ltx/tm.h>
#include <check.h>
#include <stdlib.h>
START_TEST(test_dummy) { ck_assert_int_eq(tm_commit(), 1); }
END_TEST
int main(void)
{
	Suite *s = suite_create("api");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_dummy);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
