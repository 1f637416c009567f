// SPDX-License-Identifier: MIT
/*
 * The AIO object with contexts and requests handled by libaio (Debian's
 * libaio1, loaded with dlopen): a context from libaio's io_setup is
 * accepted, completions of requests submitted with libaio's io_submit
 * wake epoll on the object, the count matches what libaio's io_getevents
 * reaps (including its zero-timeout path that peeks at the ring in user
 * space), and libaio's io_destroy hangs the object up.  Skips if
 * libaio.so.1 is not installed.
 */
#include "lib/aio.h"

#include <dlfcn.h>
#include <sys/epoll.h>

PT_BUDGET(60);

/* libaio's io_context_t is a pointer whose value is the aio_context_t;
 * its struct iocb and struct io_event have the kernel's layout. */
typedef void *io_context_t;
static int (*la_setup)(int, io_context_t *);
static int (*la_destroy)(io_context_t);
static int (*la_submit)(io_context_t, long, struct iocb **);
static int (*la_getevents)(io_context_t, long, long, struct io_event *,
			   struct timespec *);

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p)
		FAIL("dlsym(libaio.so.1, %s): %s", name, dlerror());
	return p;
}

static int wait_epoll(int ep, int timeout_ms)
{
	struct epoll_event e[2];
	int n;

	do
		n = epoll_wait(ep, e, 2, timeout_ms);
	while (n < 0 && errno == EINTR);
	CHECK_SYS(n);
	if (n) {
		CHECK_EQ(n, 1);
		CHECK(e[0].events & (EPOLLIN | EPOLLHUP));
		return e[0].events;
	}
	return 0;
}

enum { N = 32 };

int main(void)
{
	static char data[N][256];
	struct iocb cbs[N], *ptrs[N];
	struct io_event ev[N];
	struct timespec zero = { 0, 0 };
	struct epoll_event e = { .events = EPOLLIN };
	struct ax_trigger t;
	io_context_t lctx = NULL;
	aio_context_t ctx;
	int fd, ep, file, r;
	void *h;

	h = dlopen("libaio.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		pt_skip("libaio.so.1 not available: %s", dlerror());
	*(void **)&la_setup = sym(h, "io_setup");
	*(void **)&la_destroy = sym(h, "io_destroy");
	*(void **)&la_submit = sym(h, "io_submit");
	*(void **)&la_getevents = sym(h, "io_getevents");

	r = la_setup(128, &lctx);
	if (r)
		FAIL("libaio io_setup: %d (%s)", r, strerror(-r));
	ctx = (aio_context_t)(uintptr_t)lctx;
	fd = ax_fd(ctx, POLLFS_NONBLOCK);
	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));
	file = ax_tmpfile("/tmp", 0);
	ax_expect_empty(fd);
	CHECK_EQ(la_getevents(lctx, 0, N, ev, &zero), 0);

	/* N buffered writes through libaio */
	for (int i = 0; i < N; i++) {
		memset(data[i], 'a' + i % 26, sizeof(data[i]));
		ax_prep_pwrite(&cbs[i], file, data[i], sizeof(data[i]),
			       (off_t)i * (off_t)sizeof(data[i]), 500 + i);
		ptrs[i] = &cbs[i];
	}
	CHECK_EQ(la_submit(lctx, N, ptrs), N);
	CHECK_EQ(wait_epoll(ep, PT_WAIT_MS), EPOLLIN);
	ax_expect_avail(fd, ctx, N);
	/* reap some with libaio's zero timeout, the rest blocking */
	CHECK_EQ(la_getevents(lctx, 1, 10, ev, &zero), 10);
	ax_expect_avail(fd, ctx, N - 10);
	CHECK_EQ(la_getevents(lctx, N - 10, N, ev + 10, NULL), N - 10);
	for (int i = 0; i < N; i++)
		if (ev[i].data < 500 || ev[i].data >= 500 + N ||
		    ev[i].res != (int64_t)sizeof(data[0]))
			FAIL("libaio event %d: {data %llu, res %lld}", i,
			     (unsigned long long)ev[i].data,
			     (long long)ev[i].res);
	ax_expect_empty(fd);
	CHECK_EQ(wait_epoll(ep, 0), 0);
	CHECK_EQ(la_getevents(lctx, 0, N, ev, &zero), 0);
	for (int i = 0; i < N; i++) {
		char back[256];

		CHECK_EQ(pread(file, back, sizeof(back),
			       (off_t)i * (off_t)sizeof(back)), sizeof(back));
		CHECK(!memcmp(back, data[i], sizeof(back)));
	}

	/* an asynchronous completion (a pipe poll) wakes epoll_wait; then
	 * libaio's zero-timeout io_getevents finds it */
	ax_trigger_init(&t, ctx, AX_TRIGGER_PIPE, 100, 900);
	CHECK_EQ(la_getevents(lctx, 0, N, ev, &zero), 0);
	ax_trigger_start(&t);
	CHECK_EQ(wait_epoll(ep, PT_WAIT_MS), EPOLLIN);
	CHECK(ax_trigger_fired(&t));
	ax_trigger_join(&t);
	ax_expect_avail(fd, ctx, 1);
	CHECK_EQ(la_getevents(lctx, 0, N, ev, &zero), 1);
	ax_trigger_check(&t, &ev[0]);
	ax_trigger_fini(&t);
	ax_expect_empty(fd);

	/* libaio's io_destroy hangs the object up */
	r = la_destroy(lctx);
	if (r)
		FAIL("libaio io_destroy: %d (%s)", r, strerror(-r));
	CHECK_EQ(wait_epoll(ep, PT_WAIT_MS), EPOLLHUP);
	ax_expect_hup(fd);

	CHECK_SYS(close(ep));
	CHECK_SYS(close(fd));
	CHECK_SYS(close(file));
	dlclose(h);
	return PT_PASS;
}
