/* main.c - the check runner for every unit suite.
 *
 * The Makefile collects each `Suite *suite_NAME(void)` defined in
 * the tests/unit files into suites.h, so adding a suite needs no edit here.
 * Suites run in the same process (CK_NOFORK) when CK_FORK=no is set, which
 * keeps sanitizer reports readable; by default check forks per test.
 */
#include <check.h>
#include <stdlib.h>

#define PL_SUITE(fn) Suite *fn(void);
#include "suites.h"
#undef PL_SUITE

int main(void)
{
	SRunner *runner = srunner_create(NULL);
	int failed;

#define PL_SUITE(fn) srunner_add_suite(runner, fn());
#include "suites.h"
#undef PL_SUITE

	srunner_run_all(runner, CK_NORMAL);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
