// SPDX-License-Identifier: MIT
/*
 * A blocking read of the AIO object sleeps until a completion arrives,
 * caused by another thread (a submitted buffered write, a pipe write
 * completing a pending IOCB_CMD_POLL, an fsync completed from a
 * workqueue), then returns {ctx, 1}; several readers sleeping at once
 * all wake, since reading reaps nothing.
 */
#include "lib/aio.h"

PT_BUDGET(60);

struct reader {
	int fd;
	struct ax_trigger *t;
	ssize_t r;
	int err;
	bool fired_first;
	struct pollfs_aio_event ev;
	pthread_t thread;
};

static void *reader_main(void *arg)
{
	struct reader *rd = arg;

	rd->r = ax_read_rec(rd->fd, &rd->ev);
	rd->err = errno;
	rd->fired_first = ax_trigger_fired(rd->t);
	return NULL;
}

enum { READERS = 3 };

int main(void)
{
	struct reader rd[READERS];
	struct ax_trigger t;
	struct io_event ev[4];
	aio_context_t ctx;
	int fd;

	ctx = ax_setup(16);
	fd = ax_fd(ctx, 0);

	for (int mode = 0; mode < AX_TRIGGER_MODES; mode++) {
		for (int n = 1; n <= READERS; n += READERS - 1) {
			int64_t t0 = pt_mono();

			ax_expect_empty(fd);
			ax_trigger_init(&t, ctx, mode, 200, 40 + mode);
			for (int i = 0; i < n; i++) {
				rd[i].fd = fd;
				rd[i].t = &t;
				CHECK_EQ(pthread_create(&rd[i].thread, NULL,
							reader_main, &rd[i]), 0);
			}
			ax_trigger_start(&t);
			/* the watchdog fails a read that never returns */
			for (int i = 0; i < n; i++) {
				pthread_join(rd[i].thread, NULL);
				if (rd[i].r != AX_EVENT_SIZE)
					FAIL("%s: blocking read returned %zd, "
					     "errno %d (%s)",
					     ax_trigger_name(mode), rd[i].r,
					     rd[i].err, strerror(rd[i].err));
				if (!rd[i].fired_first)
					FAIL("%s: blocking read returned before "
					     "the completion was caused",
					     ax_trigger_name(mode));
				CHECK_EQ(rd[i].ev.ctx, ctx);
				CHECK_EQ(rd[i].ev.available, 1);
			}
			pt_diag("%d blocking read(s) woken by %s after %lld ms",
				n, ax_trigger_name(mode),
				(long long)((pt_mono() - t0) / NSEC_PER_MSEC));
			ax_trigger_join(&t);
			ax_expect_avail(fd, ctx, 1);
			CHECK_EQ(ax_reap(ctx, 1, 4, ev, 0), 1);
			ax_trigger_check(&t, &ev[0]);
			ax_trigger_fini(&t);
		}
	}
	ax_expect_empty(fd);
	CHECK_SYS(close(fd));
	ax_destroy(ctx);
	return PT_PASS;
}
