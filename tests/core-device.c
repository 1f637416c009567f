// SPDX-License-Identifier: MIT
/*
 * /dev/pollfs is a misc character device of mode 0666, /proc/misc lists it
 * with the same minor, and /proc/filesystems lists the pollfs filesystem.
 */
#include "lib/lib.h"

#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

PT_BUDGET(50);

/* True if some line of path, split in whitespace-separated words, has
 * word number `field` (0-based) equal to want; *other gets word 0. */
static bool file_has(const char *path, int field, const char *want,
		     char *other, size_t othersz)
{
	char line[256];
	bool found = false;
	FILE *f = fopen(path, "r");

	if (!f)
		FAIL("fopen(%s): %s", path, strerror(errno));
	while (!found && fgets(line, sizeof(line), f)) {
		char *save = NULL, *w, *first = NULL;
		int i = 0;

		for (w = strtok_r(line, " \t\n", &save); w;
		     w = strtok_r(NULL, " \t\n", &save), i++) {
			if (i == 0)
				first = w;
			if (i == field && strcmp(w, want) == 0) {
				found = true;
				if (other)
					snprintf(other, othersz, "%s", first);
			}
		}
	}
	fclose(f);
	return found;
}

int main(void)
{
	char minor_str[32];
	struct stat st;
	int fd;

	if (stat("/dev/pollfs", &st))
		FAIL("stat(/dev/pollfs): errno %d (%s)", errno, strerror(errno));
	CHECK(S_ISCHR(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0666);
	CHECK_EQ(major(st.st_rdev), 10);	/* MISC_MAJOR */

	if (!file_has("/proc/misc", 1, "pollfs", minor_str, sizeof(minor_str)))
		FAIL("/proc/misc has no pollfs line");
	CHECK_EQ(atoi(minor_str), minor(st.st_rdev));

	/* "nodev\tpollfs": the name is the last word of its line. */
	if (!file_has("/proc/filesystems", 1, "pollfs", NULL, 0) &&
	    !file_has("/proc/filesystems", 0, "pollfs", NULL, 0))
		FAIL("/proc/filesystems does not list pollfs");

	fd = CHECK_SYS(open("/dev/pollfs", O_RDWR));
	CHECK_SYS(close(fd));
	return PT_PASS;
}
