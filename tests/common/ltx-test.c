/* SPDX-License-Identifier: MIT */
/* The test library: the Check runner, the modes, the step harness. */
#include "ltx-test.h"

#include <ltx/tm.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

int ltx_test_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

const char *const ltx_test_modes[LTX_TEST_NMODES] = { "invisible", "visible" };

bool ltx_test_use_mode(int i)
{
	if (tm_config_set("LTX_MODE", ltx_test_modes[i]) == 0)
		return true;
	ck_assert_int_eq(errno, EINVAL);
	return false;
}

void ltx_test_set_handler(int sig, void (*h)(int), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(sig, &sa, NULL), 0);
}

static void *peer_main(void *arg)
{
	struct ltx_test_peer *p = arg;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (p->step == NULL && !p->quit)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->quit)
			break;
		pthread_mutex_unlock(&p->mu);
		p->step(p->arg);
		pthread_mutex_lock(&p->mu);
		p->step = NULL;
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

void ltx_test_peer_start(struct ltx_test_peer *p)
{
	ck_assert_int_eq(pthread_mutex_init(&p->mu, NULL), 0);
	ck_assert_int_eq(pthread_cond_init(&p->cv, NULL), 0);
	p->step = NULL;
	p->arg = NULL;
	p->quit = false;
	ck_assert_int_eq(pthread_create(&p->thread, NULL, peer_main, p), 0);
}

void ltx_test_peer_run(struct ltx_test_peer *p, void (*step)(void *), void *arg)
{
	pthread_mutex_lock(&p->mu);
	p->step = step;
	p->arg = arg;
	pthread_cond_broadcast(&p->cv);
	while (p->step != NULL)
		pthread_cond_wait(&p->cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

void ltx_test_peer_stop(struct ltx_test_peer *p)
{
	pthread_mutex_lock(&p->mu);
	p->quit = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	ck_assert_int_eq(pthread_join(p->thread, NULL), 0);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
}
