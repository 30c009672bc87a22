/* The file primitives of lib/base/file.h: joins, atomic writes, copies and
 * moves (across file systems too, where /dev/shm is one), listings and
 * walks in strcmp order. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "t.h"

static char root[64];

static char *at(const char *rel)
{
	static char buf[4][512];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", root, rel);
	return buf[k];
}

static void put(const char *rel, const char *text)
{
	FILE *f = fopen(at(rel), "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static char *slurp(const char *path)
{
	char *buf = NULL;
	size_t cap = 0, len = 0;
	if (file_read_all(path, &buf, &cap, &len) != 0) {
		free(buf);
		return NULL;
	}
	char *s = realloc(buf, len + 1);
	if (!s) {
		free(buf);
		return NULL;
	}
	s[len] = '\0';
	return s;
}

static void test_join(void)
{
	char *p = file_join("a", "b");
	CHECK_STR(p, "a/b", "a + b");
	free(p);
	p = file_join("a/", "b");
	CHECK_STR(p, "a/b", "no second slash after a/");
	free(p);
	p = file_join("", "b");
	CHECK_STR(p, "b", "an empty first part adds no slash");
	free(p);
	p = file_join("a", "");
	CHECK_STR(p, "a", "an empty second part adds no slash");
	free(p);
	char small[4];
	CHECK_INT(file_join_to(small, sizeof(small), "ab", "cd"), 5, "file_join_to says the length that did not fit");
}

static void test_atomic(void)
{
	CHECK_INT(file_write_atomic(at("f"), "one", 3, 0640), 0, "an atomic write of a new file");
	char *s = slurp(at("f"));
	CHECK(s && strcmp(s, "one") == 0, "holds what was written");
	free(s);
	struct stat st;
	CHECK(stat(at("f"), &st) == 0 && (st.st_mode & 07777) == 0640, "with the mode asked for");
	CHECK_INT(file_write_atomic(at("f"), "two!", 4, 0600), 0, "replaces it");
	s = slurp(at("f"));
	CHECK(s && strcmp(s, "two!") == 0, "holds the new bytes");
	free(s);
	size_t n = 0;
	char **names = file_dir_names(root, &n);
	CHECK(names && n == 1, "no temporary file is left beside it");
	file_names_free(names, n);
	errno = 0;
	CHECK(file_write_atomic(at("nodir/f"), "x", 1, 0644) == -1 && errno == ENOENT,
	      "a missing directory fails with errno");
}

static void test_copy_move(void)
{
	put("src", "payload");
	chmod(at("src"), 0751);
	CHECK_INT(file_copy(at("src"), at("cp"), (mode_t)-1), 0, "cp");
	char *s = slurp(at("cp"));
	struct stat st;
	CHECK(s && strcmp(s, "payload") == 0 && stat(at("cp"), &st) == 0 && (st.st_mode & 07777) == 0751,
	      "the copy has the bytes and the mode of its source");
	free(s);
	errno = 0;
	CHECK(file_copy(root, at("cp2"), 0644) == -1 && errno == EISDIR, "copying a directory fails (read error)");
	CHECK_INT(file_move(at("cp"), at("mv")), 0, "mv within a file system");
	CHECK(access(at("cp"), F_OK) != 0 && access(at("mv"), F_OK) == 0, "the source is gone, the target there");

	char shm[64];
	snprintf(shm, sizeof(shm), "/dev/shm/ovni-test-file.%ld", (long)getpid());
	struct stat a, b;
	if (stat("/dev/shm", &b) == 0 && stat(root, &a) == 0 && a.st_dev != b.st_dev) {
		CHECK_INT(file_move(at("mv"), shm), 0, "mv across file systems");
		s = slurp(shm);
		CHECK(s && strcmp(s, "payload") == 0 && access(at("mv"), F_OK) != 0,
		      "copied whole, then the source removed");
		free(s);
		unlink(shm);
	} else {
		printf("ok - # SKIP no second file system at /dev/shm\n");
	}
	errno = 0;
	CHECK(file_move(at("absent"), at("x")) == -1 && errno == ENOENT, "moving a missing file fails");
}

struct seen {
	char list[512];
};

static int visit(void *arg, const char *rel, const char *full, const struct stat *st)
{
	struct seen *s = arg;
	(void)full;
	if (!st)
		return -1;
	strcat(s->list, rel);
	strcat(s->list, S_ISDIR(st->st_mode) ? "/ " : " ");
	return strcmp(rel, "d/skip") == 0 ? 0 : 1;
}

static void test_walk(void)
{
	mkdir(at("w"), 0755);
	mkdir(at("w/d"), 0755);
	mkdir(at("w/d/skip"), 0755);
	put("w/d/skip/hidden", "");
	put("w/b", "");
	put("w/a", "");
	put("w/d/z", "");
	symlink("d", at("w/link"));
	size_t n = 0;
	char **names = file_dir_names(at("w"), &n);
	CHECK(names && n == 4 && !strcmp(names[0], "a") && !strcmp(names[1], "b") && !strcmp(names[2], "d") &&
	      !strcmp(names[3], "link") && names[4] == NULL, "names in strcmp order, NULL-terminated");
	file_names_free(names, n);
	struct seen s = { "" };
	CHECK_INT(file_walk(at("w"), visit, &s), 0, "a walk");
	CHECK_STR(s.list, "a b d/ d/skip/ d/z link ", "depth first, sorted, links not followed, 0 skips a directory");
	CHECK(file_walk(at("nowhere"), visit, &s) == -1, "a walk of a missing directory fails through its visit");
	CHECK(file_dir_names(at("nowhere"), &n) == NULL && errno == ENOENT, "listing a missing directory fails");
}

static void test_pread(void)
{
	put("ten", "0123456789");
	int fd = open(at("ten"), O_RDONLY);
	char b[16] = { 0 };
	int err = -1;
	CHECK(file_pread_all(fd, b, 4, 3, &err) == 4 && err == 0 && memcmp(b, "3456", 4) == 0,
	      "pread_all reads n bytes at the offset");
	CHECK(file_pread_all(fd, b, 16, 6, &err) == 4 && err == 0 && memcmp(b, "6789", 4) == 0,
	      "pread_all stops at the end of the file, err 0");
	close(fd);
	CHECK(file_pread_all(fd, b, 4, 0, &err) == 0 && err == EBADF, "pread_all gives the errno of a failed read");
}

static int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void test_mkdirs(void)
{
	CHECK_INT(file_mkdirs(at("m/a/b/c"), 0), 0, "mkdir -p of three missing levels");
	CHECK(is_dir(at("m/a/b/c")), "the leaf is a directory");
	CHECK_INT(file_mkdirs(at("m/a/b/c"), 0), 0, "again: it exists");
	CHECK_INT(file_mkdirs(at("m/a//x/"), 0), 0, "doubled and trailing slashes");
	CHECK(is_dir(at("m/a/x")), "made with them");
	CHECK_INT(file_mkdirs(at("m/p/q/file"), 1), 0, "parents only");
	CHECK(is_dir(at("m/p/q")) && access(at("m/p/q/file"), F_OK) != 0, "the parents, not the last part");
	CHECK_INT(file_mkdirs("plain-name-in-cwd", 1), 0, "parents only of a bare name: nothing to make");
	put("m/f", "x");
	errno = 0;
	CHECK(file_mkdirs(at("m/f"), 0) == -1 && errno == ENOTDIR, "a file in the way of the leaf: ENOTDIR");
	errno = 0;
	CHECK(file_mkdirs(at("m/f/sub/leaf"), 0) == -1 && errno == ENOTDIR, "a file in the way of a parent: ENOTDIR");
	CHECK_INT(file_mkdirs("/", 0), 0, "the root exists");
}

static char told[256];

static void tell(const char *dir)
{
	size_t n = strlen(told), skip = strlen(root) + 1;
	snprintf(told + n, sizeof(told) - n, "%s%s", n ? " " : "", strlen(dir) > skip ? dir + skip : dir);
}

static void test_mkdirs_told(void)
{
	told[0] = '\0';
	CHECK_INT(file_mkdirs_told(at("t/a/b"), 0, tell), 0, "mkdir -p, told");
	CHECK_STR(told, "t t/a t/a/b", "told of each directory made, from the top");
	told[0] = '\0';
	CHECK_INT(file_mkdirs_told(at("t/a/c/d/f"), 1, tell), 0, "parents only, told");
	CHECK_STR(told, "t/a/c t/a/c/d", "told only of those it made, not of t/a nor the last part");
	told[0] = '\0';
	CHECK_INT(file_mkdirs_told(at("t/a"), 0, tell), 0, "one that exists");
	CHECK_STR(told, "", "told of nothing");
}

int main(void)
{
	snprintf(root, sizeof(root), "/tmp/ovni-test-file.XXXXXX");
	if (!mkdtemp(root)) {
		printf("not ok - mkdtemp\n");
		return 1;
	}
	test_join();
	test_atomic();
	test_copy_move();
	test_walk();
	test_pread();
	test_mkdirs();
	test_mkdirs_told();
	file_remove_tree(root);
	CHECK(access(root, F_OK) != 0, "rm -r leaves nothing");
	return t_done();
}
