/* spinlock.c - a busy wait on a pthread spin lock: the worker holds the
 * lock while it computes its budget; the waiter spins in
 * pthread_spin_lock the whole time.  classify_hotspots must give it
 * busy_wait.
 */
#include <pthread.h>
#include <stdio.h>

#include "common.h"

static pthread_spinlock_t lock;
static atomic_int held;

__attribute__((noinline)) static void *wait_for_worker(void *arg)
{
	(void)arg;
	while (!atomic_load(&held))
		;
	pthread_spin_lock(&lock);
	pthread_spin_unlock(&lock);
	return NULL;
}

int main(void)
{
	pthread_t waiter;

	pthread_spin_init(&lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_lock(&lock);
	atomic_store(&held, 1);
	pthread_create(&waiter, NULL, wait_for_worker, NULL);
	work();
	pthread_spin_unlock(&lock);
	pthread_join(waiter, NULL);
	printf("%lu\n", sink & 1);
	return 0;
}
