/*
 * check_sink.c - the log destination (core/sink.h): path templates, file
 * creation and appending, refusal of symlinks and FIFOs, one warning per
 * failure streak, a host that survives SIGPIPE and SIGXFSZ from our own
 * writes, built-in and external rotation, and the library's own fd table
 * (core/progfd.h).
 */
#include "../../core/progfd.h"
#include "../../core/sink.h"
#include "unit_util.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* What the report callback saw. */
struct reports {
	unsigned n;
	char last[1024];
};

static void on_report(void *ctx, const char *msg)
{
	struct reports *r = ctx;

	r->n++;
	snprintf(r->last, sizeof(r->last), "%s", msg);
}

static char dir[64];
static struct reports rep;
static struct sink sk;

static void setup(void)
{
	uu_tmpdir(dir, sizeof(dir));
	memset(&rep, 0, sizeof(rep));
	sk.kept = NULL; /* kept by sink_init: none unless a test says */
	umask(0); /* so the mode we see is the one the sink asked for */
}

static void teardown(void)
{
	uu_rmtree(dir);
}

/* --- templates -------------------------------------------------------- */

START_TEST(test_sink_expand_replaces_pid_name_time_uid_and_percent)
{
	char out[128];

	ck_assert_int_eq(sink_expand("/x/%n.%p.%t.%u.%%.log", 42, "a/b/c",
				     1700000000, 1000, out, sizeof(out)),
			 0);
	ck_assert_str_eq(out, "/x/a_b_c.42.1700000000.1000.%.log");
	ck_assert_int_eq(sink_expand("plain", 1, "p", 2, 3, out, sizeof(out)),
			 0);
	ck_assert_str_eq(out, "plain");
	ck_assert_int_eq(sink_expand("", 1, "p", 2, 3, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(sink_expand("%p%p", -1, "p", 2, 3, out, sizeof(out)),
			 0);
	ck_assert_str_eq(out, "-1-1");
}
END_TEST

/* %n is one visible file name whatever argv[0] was: a newline or ESC went
 * into the file name as it was, "" made a hidden ".42.log", and ".."
 * climbed out of the directory the template names. */
START_TEST(test_sink_expand_name_is_one_visible_file_name)
{
	static const struct {
		const char *prog, *want;
	} c[] = {
		{ "a\nb\x1b[1mc\x7f", "/d/n/a_b_[1mc_.42.log" },
		{ "", "/d/n/_.42.log" },
		{ ".", "/d/n/_.42.log" },
		{ "..", "/d/n/__.42.log" },
		{ "...", "/d/n/....42.log" },
		{ "caf\xc3\xa9 x", "/d/n/caf\xc3\xa9 x.42.log" },
	};
	char out[128];
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ck_assert_int_eq(sink_expand("/d/n/%n.%p.log", 42, c[i].prog, 0,
					     0, out, sizeof(out)),
				 0);
		ck_assert_str_eq(out, c[i].want);
	}
}
END_TEST

START_TEST(test_sink_expand_unknown_or_trailing_escape_is_einval_with_empty_out)
{
	char out[64];

	memset(out, 'x', sizeof(out));
	ck_assert_int_eq(sink_expand("/x/%q", 1, "p", 2, 3, out, sizeof(out)),
			 -EINVAL);
	ck_assert_str_eq(out, "");
	memset(out, 'x', sizeof(out));
	ck_assert_int_eq(sink_expand("/x/log%", 1, "p", 2, 3, out, sizeof(out)),
			 -EINVAL);
	ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_sink_expand_too_long_is_enametoolong_with_empty_out)
{
	char out[8];

	ck_assert_int_eq(sink_expand("abcdefg", 1, "p", 2, 3, out, sizeof(out)),
			 0); /* 7 bytes and the NUL fit exactly */
	ck_assert_str_eq(out, "abcdefg");
	ck_assert_int_eq(sink_expand("abcdefgh", 1, "p", 2, 3, out, sizeof(out)),
			 -ENAMETOOLONG);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(sink_expand("l.%n", 1, "program", 2, 3, out,
				     sizeof(out)),
			 -ENAMETOOLONG);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(sink_expand("%t", 1, "p", 123456789, 3, out,
				     sizeof(out)),
			 -ENAMETOOLONG);
	ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_sink_anchor_prefixes_the_directory_with_percent_doubled)
{
	char adir[] = "/tmp/sm-anchor-%p-XXXXXX", back[4096], t[256], out[512];

	ck_assert_ptr_nonnull(getcwd(back, sizeof(back)));
	ck_assert_ptr_nonnull(mkdtemp(adir));
	ck_assert_int_eq(chdir(adir), 0);
	snprintf(t, sizeof(t), "rel/%%n.%%p.log");
	ck_assert_int_eq(sink_anchor(t, sizeof(t)), 0);
	/* Expanded, the adirectory comes back as it is. */
	ck_assert_int_eq(sink_expand(t, 42, "prog", 0, 0, out, sizeof(out)), 0);
	ck_assert_str_eq(out + strlen(adir), "/rel/prog.42.log");
	ck_assert_int_eq(strncmp(out, adir, strlen(adir)), 0);
	/* Absolute, empty and stderr stay. */
	snprintf(t, sizeof(t), "/x/%%p");
	ck_assert_int_eq(sink_anchor(t, sizeof(t)), 0);
	ck_assert_str_eq(t, "/x/%p");
	snprintf(t, sizeof(t), "stderr");
	ck_assert_int_eq(sink_anchor(t, sizeof(t)), 0);
	ck_assert_str_eq(t, "stderr");
	/* Too long for the buffer: unchanged. */
	snprintf(t, 8, "a.log");
	ck_assert_int_eq(sink_anchor(t, 8), -ENAMETOOLONG);
	ck_assert_str_eq(t, "a.log");
	ck_assert_int_eq(chdir(back), 0);
	rmdir(adir);
}
END_TEST

static TCase *tc_expand(void)
{
	TCase *tc = tcase_create("expand");

	tcase_add_test(tc, test_sink_anchor_prefixes_the_directory_with_percent_doubled);
	tcase_add_test(tc, test_sink_expand_replaces_pid_name_time_uid_and_percent);
	tcase_add_test(tc, test_sink_expand_name_is_one_visible_file_name);
	tcase_add_test(tc, test_sink_expand_unknown_or_trailing_escape_is_einval_with_empty_out);
	tcase_add_test(tc, test_sink_expand_too_long_is_enametoolong_with_empty_out);
	return tc;
}

/* --- files ---------------------------------------------------------------- */

START_TEST(test_sink_write_creates_file_0600_and_appends)
{
	char tmpl[128], path[128];
	struct stat st;
	char *text;

	snprintf(tmpl, sizeof(tmpl), "%s/%%n.%%p.log", dir);
	snprintf(path, sizeof(path), "%s/my_prog.77.log", dir);
	ck_assert_int_eq(sink_init(&sk, tmpl, 77, "my/prog", 5, on_report, &rep),
			 0);
	ck_assert_str_eq(sk.path, path);
	ck_assert(!sk.to_stderr);
	/* Nothing is created before there is something to write. */
	ck_assert_int_eq(sink_write(&sk, "", 0), 0);
	ck_assert_int_ne(access(path, F_OK), 0);

	ck_assert_int_eq(sink_write(&sk, "one\n", 4), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(sink_write(&sk, "two\n", 4), 0);
	text = uu_slurp(path);
	ck_assert_str_eq(text, "one\ntwo\n");
	free(text);
	ck_assert_uint_eq(rep.n, 0);
}
END_TEST

START_TEST(test_sink_write_preserves_errno)
{
	char tmpl[128];

	snprintf(tmpl, sizeof(tmpl), "%s/log", dir);
	sink_init(&sk, tmpl, 1, "p", 0, on_report, &rep);
	errno = 999;
	ck_assert_int_eq(sink_write(&sk, "x", 1), 0);
	ck_assert_int_eq(errno, 999);
	snprintf(tmpl, sizeof(tmpl), "%s/missing/log", dir);
	sink_init(&sk, tmpl, 1, "p", 0, on_report, &rep);
	errno = 998;
	ck_assert_int_lt(sink_write(&sk, "x", 1), 0);
	ck_assert_int_eq(errno, 998);
}
END_TEST

/* A log out of reach: the one warning says the records are lost, and,
 * while a state file holds the numbers, that recovery writes the exit
 * record (not when none does). */
/* After a chroot (of the process, or of the parent a fork child came
 * from), a log that cannot be opened is looked up inside the new root:
 * the warning says so, not "until it works".  Its own process (Check
 * forks each test): the flag is the process's. */
START_TEST(test_sink_lost_records_warning_after_a_chroot)
{
	char tmpl[128];

	snprintf(tmpl, sizeof(tmpl), "%s/missing/log", dir);
	sink_root_changed();
	sink_init(&sk, tmpl, 1, "p", 0, on_report, &rep);
	ck_assert_int_lt(sink_write(&sk, "x\n", 2), 0);
	ck_assert_int_eq(rep.n, 1);
	ck_assert_ptr_nonnull(strstr(rep.last, "records are lost (after a chroot, the path is looked up inside the new root)"));
	ck_assert_ptr_null(strstr(rep.last, "until it works"));
}
END_TEST

START_TEST(test_sink_lost_records_warning_says_whether_totals_are_kept)
{
	static bool kept;
	char tmpl[128];

	snprintf(tmpl, sizeof(tmpl), "%s/missing/log", dir);
	sink_init(&sk, tmpl, 1, "p", 0, on_report, &rep);
	ck_assert_int_lt(sink_write(&sk, "x\n", 2), 0);
	ck_assert_int_eq(rep.n, 1);
	ck_assert_ptr_nonnull(strstr(rep.last, "records are lost until it works"));
	ck_assert_ptr_null(strstr(rep.last, "sockmeter recover"));

	kept = true;
	sk.kept = &kept;
	sink_init(&sk, tmpl, 1, "p", 0, on_report, &rep);
	ck_assert_ptr_eq(sk.kept, &kept);
	ck_assert_int_lt(sink_write(&sk, "x\n", 2), 0);
	ck_assert_int_eq(rep.n, 2);
	ck_assert_ptr_nonnull(strstr(rep.last, "records are lost until it works, but for up to 256 KiB of close records, which wait for it (its totals stay in its state file, for `sockmeter recover` to write its exit record once the log can be written)"));

	kept = false; /* the state file could not be made after all */
	sink_init(&sk, tmpl, 1, "p", 0, on_report, &rep);
	ck_assert_int_lt(sink_write(&sk, "x\n", 2), 0);
	ck_assert_int_eq(rep.n, 3);
	ck_assert_ptr_null(strstr(rep.last, "sockmeter recover"));
	sk.kept = NULL;
}
END_TEST

START_TEST(test_sink_write_refuses_planted_symlink_and_reports_once)
{
	char tmpl[128], target[128];
	char *text;
	struct stat st;

	snprintf(tmpl, sizeof(tmpl), "%s/log", dir);
	snprintf(target, sizeof(target), "%s/victim", dir);
	{
		FILE *f = fopen(target, "w");

		ck_assert_ptr_nonnull(f);
		fputs("keep", f);
		fclose(f);
	}
	ck_assert_int_eq(symlink(target, tmpl), 0);
	ck_assert_int_eq(sink_init(&sk, tmpl, 1, "p", 0, on_report, &rep), 0);
	ck_assert_int_eq(sink_write(&sk, "evil\n", 5), -ELOOP);
	ck_assert_int_eq(sink_write(&sk, "evil\n", 5), -ELOOP);
	text = uu_slurp(target);
	ck_assert_str_eq(text, "keep");
	free(text);
	ck_assert_int_eq(lstat(tmpl, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_uint_eq(rep.n, 1);
	ck_assert_ptr_nonnull(strstr(rep.last, tmpl));
	/* Says why, and what names fd 2 (SOCKMETER_LOG=/dev/stderr said
	 * only "Too many levels of symbolic links"). */
	ck_assert_ptr_nonnull(strstr(rep.last, "its last part is a symbolic link, which a log is never opened through; for fd 2, the path is `stderr`"));
	ck_assert(sk.failing);
}
END_TEST

START_TEST(test_sink_write_to_missing_directory_fails_with_enoent_and_reports_once)
{
	char tmpl[128];

	snprintf(tmpl, sizeof(tmpl), "%s/no/such/dir/%%p.log", dir);
	ck_assert_int_eq(sink_init(&sk, tmpl, 5, "p", 0, on_report, &rep), 0);
	ck_assert_uint_eq(rep.n, 0);
	ck_assert_int_eq(sink_write(&sk, "a\n", 2), -ENOENT);
	ck_assert_int_eq(sink_write(&sk, "b\n", 2), -ENOENT);
	ck_assert_int_eq(sink_write(&sk, "c\n", 2), -ENOENT);
	ck_assert_uint_eq(rep.n, 1);
	ck_assert_ptr_nonnull(strstr(rep.last, "/no/such/dir/5.log"));
}
END_TEST

/* The first failure of each run of failures is reported: one warning for
 * the first run, one more when writing fails again after it worked. */
START_TEST(test_sink_recovers_when_directory_appears_and_warns_once_per_run_of_failures)
{
	char tmpl[160], sub[96], path[160];
	char *text;

	snprintf(sub, sizeof(sub), "%s/later", dir);
	snprintf(tmpl, sizeof(tmpl), "%s/log", sub);
	sink_init(&sk, tmpl, 5, "p", 0, on_report, &rep);
	ck_assert_int_eq(sink_write(&sk, "lost\n", 5), -ENOENT);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	ck_assert_int_eq(sink_write(&sk, "kept\n", 5), 0);
	ck_assert(!sk.failing);
	snprintf(path, sizeof(path), "%s/log", sub);
	text = uu_slurp(path);
	ck_assert_str_eq(text, "kept\n");
	free(text);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(rmdir(sub), 0);
	ck_assert_int_eq(sink_write(&sk, "lost\n", 5), -ENOENT);
	ck_assert_int_eq(sink_write(&sk, "lost\n", 5), -ENOENT);
	ck_assert_uint_eq(rep.n, 2);
}
END_TEST

/* sink_in_reach: a guess from the path, no write; false while a failure
 * is pending. */
START_TEST(test_sink_in_reach_follows_the_directory_and_failures)
{
	char tmpl[160], sub[96];

	snprintf(sub, sizeof(sub), "%s/reach", dir);
	snprintf(tmpl, sizeof(tmpl), "%s/%%p.log", sub);
	sink_init(&sk, tmpl, 5, "p", 0, on_report, &rep);
	ck_assert(!sink_in_reach(&sk)); /* no such directory */
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	ck_assert(sink_in_reach(&sk));
	ck_assert_int_eq(rmdir(sub), 0);
	ck_assert_int_eq(sink_write(&sk, "lost\n", 5), -ENOENT);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	ck_assert(!sink_in_reach(&sk)); /* the failure is said, not yet over */
	ck_assert_int_eq(sink_write(&sk, "kept\n", 5), 0);
	ck_assert(sink_in_reach(&sk));
	snprintf(tmpl, sizeof(tmpl), "%s/5.log", sub);
	ck_assert_int_eq(unlink(tmpl), 0);
	ck_assert_int_eq(rmdir(sub), 0);
}
END_TEST

START_TEST(test_sink_write_to_fifo_without_reader_fails_at_once)
{
	char tmpl[128];

	snprintf(tmpl, sizeof(tmpl), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(tmpl, 0600), 0);
	sink_init(&sk, tmpl, 5, "p", 0, on_report, &rep);
	/* O_NONBLOCK: no reader gives ENXIO instead of hanging the host. */
	ck_assert_int_eq(sink_write(&sk, "x\n", 2), -ENXIO);
	ck_assert_uint_eq(rep.n, 1);
}
END_TEST

/* In a child of its own (Check's own writes must not meet the limit):
 * 0 when both writes failed with EFBIG after 10 bytes, one warning, and no
 * SIGXFSZ left pending. */
static int write_over_fsize_limit(const char *path)
{
	struct rlimit rl = { 10, 10 };
	char buf[100];
	struct stat st;
	sigset_t pending;

	if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
		return 1;
	memset(buf, 'z', sizeof(buf));
	/* The default action of SIGXFSZ would kill us here. */
	if (sink_write(&sk, buf, sizeof(buf)) != -EFBIG)
		return 2;
	/* The 10 bytes that fitted were a torn record: cut off again. */
	if (stat(path, &st) != 0 || st.st_size != 0)
		return 3;
	if (sink_write(&sk, buf, sizeof(buf)) != -EFBIG)
		return 4;
	if (rep.n != 1)
		return 5;
	sigpending(&pending);
	if (sigismember(&pending, SIGXFSZ))
		return 6;
	return 0;
}

START_TEST(test_sink_write_survives_file_size_limit_sigxfsz)
{
	char tmpl[128];
	pid_t pid;
	int status;

	snprintf(tmpl, sizeof(tmpl), "%s/log", dir);
	sink_init(&sk, tmpl, 5, "p", 0, on_report, &rep);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(write_over_fsize_limit(tmpl));
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(!WIFSIGNALED(status), "killed by signal %d",
		      WTERMSIG(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

START_TEST(test_sink_init_with_bad_template_reports_once_and_fails)
{
	char tmpl[128];

	snprintf(tmpl, sizeof(tmpl), "%s/log.%%q", dir);
	ck_assert_int_eq(sink_init(&sk, tmpl, 5, "p", 0, on_report, &rep),
			 -EINVAL);
	ck_assert_uint_eq(rep.n, 1);
	ck_assert_ptr_nonnull(strstr(rep.last, "bad path template"));
}
END_TEST

/*
 * A template that does not expand gives its one warning and drops records:
 * no file named after the raw template is created.
 */
START_TEST(test_sink_with_bad_template_drops_records_instead_of_creating_literal_file)
{
	char tmpl[128];

	snprintf(tmpl, sizeof(tmpl), "%s/log.%%q", dir);
	sink_init(&sk, tmpl, 5, "p", 0, on_report, &rep);
	sink_write(&sk, "x\n", 2);
	ck_assert_msg(access(tmpl, F_OK) != 0, "%s was created", tmpl);
	ck_assert_uint_eq(rep.n, 1);
}
END_TEST

START_TEST(test_sink_default_template_makes_private_per_user_directory)
{
	char want[128], udir[64];
	struct stat st;

	snprintf(udir, sizeof(udir), "/tmp/sockmeter-%u", (unsigned)getuid());
	snprintf(want, sizeof(want), "%s/unit_prog.31337.log", udir);
	umask(022);
	ck_assert_int_eq(sink_init(&sk, CONFIG_DEFAULT_LOG, 31337, "unit/prog",
				   0, on_report, &rep),
			 0);
	ck_assert_str_eq(sk.path, want);
	ck_assert_int_eq(lstat(udir, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_uint_eq(st.st_uid, geteuid());
	ck_assert_uint_eq(st.st_mode & 022, 0);
	ck_assert_uint_eq(rep.n, 0);
}
END_TEST

static TCase *tc_files(void)
{
	TCase *tc = tcase_create("files");

	tcase_add_unchecked_fixture(tc, uu_root_setup, uu_root_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sink_write_creates_file_0600_and_appends);
	tcase_add_test(tc, test_sink_write_preserves_errno);
	tcase_add_test(tc, test_sink_lost_records_warning_says_whether_totals_are_kept);
	tcase_add_test(tc, test_sink_lost_records_warning_after_a_chroot);
	tcase_add_test(tc, test_sink_write_refuses_planted_symlink_and_reports_once);
	tcase_add_test(tc, test_sink_write_to_missing_directory_fails_with_enoent_and_reports_once);
	tcase_add_test(tc, test_sink_in_reach_follows_the_directory_and_failures);
	tcase_add_test(tc, test_sink_recovers_when_directory_appears_and_warns_once_per_run_of_failures);
	tcase_add_test(tc, test_sink_write_to_fifo_without_reader_fails_at_once);
	tcase_add_test(tc, test_sink_write_survives_file_size_limit_sigxfsz);
	tcase_add_test(tc, test_sink_init_with_bad_template_reports_once_and_fails);
	tcase_add_test(tc, test_sink_with_bad_template_drops_records_instead_of_creating_literal_file);
	tcase_add_test(tc, test_sink_default_template_makes_private_per_user_directory);
	return tc;
}

/* --- stderr ------------------------------------------------------------ */

START_TEST(test_sink_stderr_writes_to_fd_2)
{
	char path[128];
	char *text;
	int fd, saved = dup(2);

	snprintf(path, sizeof(path), "%s/err", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(dup2(fd, 2), 2);
	close(fd);
	ck_assert_int_eq(sink_init(&sk, "stderr", 1, "p", 0, on_report, &rep),
			 0);
	ck_assert(sk.to_stderr);
	ck_assert_int_eq(sink_write(&sk, "record\n", 7), 0);
	dup2(saved, 2);
	close(saved);
	text = uu_slurp(path);
	ck_assert_str_eq(text, "record\n");
	free(text);
	/* fd 2 is still open afterwards: the sink never closes it. */
	ck_assert_int_ne(fcntl(2, F_GETFD), -1);
}
END_TEST

START_TEST(test_sink_stderr_to_closed_pipe_survives_sigpipe)
{
	int p[2], saved = dup(2);
	sigset_t pending;
	int r;

	ck_assert_int_eq(pipe(p), 0);
	close(p[0]);
	ck_assert_int_eq(dup2(p[1], 2), 2);
	close(p[1]);
	sink_init(&sk, "stderr", 1, "p", 0, on_report, &rep);
	/* The default action of SIGPIPE would kill us here. */
	r = sink_write(&sk, "record\n", 7);
	dup2(saved, 2);
	close(saved);
	ck_assert_int_eq(r, -EPIPE);
	ck_assert_uint_eq(rep.n, 1);
	sigpending(&pending);
	ck_assert(!sigismember(&pending, SIGPIPE));
}
END_TEST

static TCase *tc_stderr(void)
{
	TCase *tc = tcase_create("stderr");

	tcase_add_unchecked_fixture(tc, uu_root_setup, uu_root_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sink_stderr_writes_to_fd_2);
	tcase_add_test(tc, test_sink_stderr_to_closed_pipe_survives_sigpipe);
	return tc;
}

/* --- rotation ----------------------------------------------------------- */

/* The content of dir/name, "" when missing (freed by the caller). */
static char *file_in(const char *name)
{
	char path[160];
	char *text;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	text = access(path, F_OK) == 0 ? uu_slurp(path) : NULL;
	return text ? text : strdup("");
}

static void expect_file(const char *name, const char *want)
{
	char *text = file_in(name);

	ck_assert_msg(strcmp(text, want) == 0, "%s holds \"%s\", not \"%s\"",
		      name, text, want);
	free(text);
}

static void rot_init(uint64_t max_size, unsigned keep)
{
	char tmpl[128];

	snprintf(tmpl, sizeof(tmpl), "%s/log", dir);
	ck_assert_int_eq(sink_init(&sk, tmpl, 1, "p", 0, on_report, &rep), 0);
	sink_set_rotation(&sk, max_size, keep);
}

START_TEST(test_sink_rotation_shifts_the_set_and_drops_beyond_keep)
{
	char line[32];
	int i;

	rot_init(20, 3); /* two 8-byte lines per file */
	for (i = 1; i <= 9; i++) {
		snprintf(line, sizeof(line), "line%d..\n", i);
		ck_assert_int_eq(sink_write(&sk, line, 8), 0);
	}
	expect_file("log", "line9..\n");
	expect_file("log.1", "line7..\nline8..\n");
	expect_file("log.2", "line5..\nline6..\n");
	expect_file("log.3", "line3..\nline4..\n");
	expect_file("log.4", "");
	ck_assert_uint_eq(rep.n, 0);
}
END_TEST

START_TEST(test_sink_rotation_splits_a_batch_at_line_boundaries)
{
	rot_init(20, 5);
	ck_assert_int_eq(sink_write(&sk, "line1..\nline2..\nline3..\nline4..\n"
					 "line5..\n", 40), 0);
	expect_file("log.2", "line1..\nline2..\n");
	expect_file("log.1", "line3..\nline4..\n");
	expect_file("log", "line5..\n");
}
END_TEST

START_TEST(test_sink_rotation_gives_an_oversized_record_a_file_of_its_own)
{
	rot_init(20, 5);
	ck_assert_int_eq(sink_write(&sk, "short\n", 6), 0);
	ck_assert_int_eq(sink_write(&sk, "a record longer than twenty\nx\n",
				    30), 0);
	expect_file("log.2", "short\n");
	expect_file("log.1", "a record longer than twenty\n");
	expect_file("log", "x\n");
}
END_TEST

START_TEST(test_sink_rotation_with_keep_0_removes_the_full_file)
{
	rot_init(20, 0);
	ck_assert_int_eq(sink_write(&sk, "line1..\nline2..\n", 16), 0);
	ck_assert_int_eq(sink_write(&sk, "line3..\n", 8), 0);
	expect_file("log", "line3..\n");
	expect_file("log.1", "");
}
END_TEST

START_TEST(test_sink_follows_external_rotation_in_create_mode)
{
	char path[128], moved[140];
	int fd;

	rot_init(0, 0); /* no built-in rotation: logrotate does it */
	snprintf(path, sizeof(path), "%s/log", dir);
	snprintf(moved, sizeof(moved), "%s/log.1", dir);
	ck_assert_int_eq(sink_write(&sk, "before\n", 7), 0);
	ck_assert_int_eq(rename(path, moved), 0);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0640);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(sink_write(&sk, "after\n", 6), 0);
	expect_file("log.1", "before\n");
	expect_file("log", "after\n");
}
END_TEST

/* Two processes share the path: every line lands once, whole, in a file
 * of at most max_size bytes. */
START_TEST(test_sink_rotation_shared_by_two_processes_loses_and_tears_nothing)
{
	char name[32], line[32];
	pid_t pids[2];
	int i, k, total = 0, status;

	rot_init(256, 1000);
	for (k = 0; k < 2; k++) {
		pids[k] = fork();
		ck_assert_int_ge(pids[k], 0);
		if (pids[k] == 0) {
			for (i = 0; i < 300; i++) {
				int n = snprintf(line, sizeof(line),
						 "p%d line %04d\n", k, i);

				if (sink_write(&sk, line, (size_t)n) != 0)
					_exit(1);
			}
			_exit(0);
		}
	}
	for (k = 0; k < 2; k++) {
		ck_assert_int_eq(waitpid(pids[k], &status, 0), pids[k]);
		ck_assert(WIFEXITED(status));
		ck_assert_int_eq(WEXITSTATUS(status), 0);
	}
	for (i = 0; i <= 1000; i++) {
		char *text, *p;

		snprintf(name, sizeof(name), i ? "log.%d" : "log", i);
		text = file_in(name);
		if (!text[0]) {
			free(text);
			break;
		}
		ck_assert_uint_le(strlen(text), 256);
		for (p = text; *p; p = strchr(p, '\n') + 1) {
			ck_assert_msg(strncmp(p, "p0 line ", 8) == 0 ||
					      strncmp(p, "p1 line ", 8) == 0,
				      "torn line in %s", name);
			ck_assert_ptr_nonnull(strchr(p, '\n'));
			total++;
		}
		free(text);
	}
	ck_assert_int_eq(total, 600);
}
END_TEST

/* A log that another process keeps rotating: every file the sink finds at
 * the path is locked, and renamed away before it is let go (the rotator
 * locks the next file before it puts it there).  The batch never has its
 * turn: after 100 tries and 5 s it is refused with -EAGAIN, and said so
 * (before: "cannot write: Resource temporarily unavailable", which told
 * nobody why). */
START_TEST(test_sink_rotation_never_its_turn_is_refused_and_said)
{
	char path[128], tmp[160];
	int sync[2], cur, fd, n, status;
	pid_t pid;
	char c;

	rot_init(1 << 20, 3);
	snprintf(path, sizeof(path), "%s/log", dir);
	ck_assert_int_eq(pipe(sync), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		cur = open(path, O_WRONLY | O_CREAT, 0600);
		if (cur < 0 || flock(cur, LOCK_EX) != 0)
			_exit(1);
		if (write(sync[1], "x", 1) != 1)
			_exit(1);
		for (n = 0;; n++) {
			snprintf(tmp, sizeof(tmp), "%s/next.%d", dir, n);
			fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
			if (fd < 0 || flock(fd, LOCK_EX) != 0 ||
			    rename(tmp, path) != 0)
				_exit(1);
			close(cur); /* (its lock) */
			cur = fd;
			usleep(500);
		}
	}
	ck_assert_int_eq(read(sync[0], &c, 1), 1);
	ck_assert_int_eq(sink_write(&sk, "line\n", 5), -EAGAIN);
	ck_assert_uint_eq(sk.batch_done, 0);
	ck_assert_uint_eq(rep.n, 1);
	ck_assert_msg(strstr(rep.last, "rotated it again and again for 5 s") &&
			      strstr(rep.last, "never had its turn"),
		      "%s", rep.last);
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status)); /* (not a failure of its own) */
	close(sync[0]);
	close(sync[1]);
}
END_TEST

static TCase *tc_rotation(void)
{
	TCase *tc = tcase_create("rotation");

	tcase_add_unchecked_fixture(tc, uu_root_setup, uu_root_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sink_rotation_shifts_the_set_and_drops_beyond_keep);
	tcase_add_test(tc, test_sink_rotation_splits_a_batch_at_line_boundaries);
	tcase_add_test(tc, test_sink_rotation_gives_an_oversized_record_a_file_of_its_own);
	tcase_add_test(tc, test_sink_rotation_with_keep_0_removes_the_full_file);
	tcase_add_test(tc, test_sink_follows_external_rotation_in_create_mode);
	tcase_add_test(tc, test_sink_rotation_shared_by_two_processes_loses_and_tears_nothing);
	tcase_add_test(tc, test_sink_rotation_never_its_turn_is_refused_and_said);
	tcase_set_timeout(tc, 30); /* (that one waits 5 s) */
	return tc;
}

/* --- the library's own fd table ----------------------------------------- */

static int lowest_free(void)
{
	int fd = 0;

	while (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
		fd++;
	return fd;
}

struct detached {
	int detach_r;
	int held;       /* an fd the thread opened and keeps open */
	int pipe_rd;    /* the program's fd the thread looks at */
	struct stat seen;
	int stat_r, stat_missing_r, write_r;
	pthread_barrier_t opened, checked;
};

static void *detached_main(void *p)
{
	struct detached *d = p;

	d->detach_r = progfd_detach();
	d->held = open("/dev/null", O_RDONLY | O_CLOEXEC);
	d->stat_r = progfd_stat(d->pipe_rd, &d->seen);
	d->stat_missing_r = progfd_stat(999, &d->seen);
	if (d->stat_r == 0)
		progfd_stat(d->pipe_rd, &d->seen);
	d->write_r = sink_write(&sk, "from the ticker\n", 16);
	pthread_barrier_wait(&d->opened);
	pthread_barrier_wait(&d->checked);
	close(d->held);
	return NULL;
}

START_TEST(test_progfd_detached_thread_opens_outside_the_program_fd_table)
{
	struct detached d = { 0 };
	struct stat st;
	pthread_t t;
	int p[2], low;
	char tmpl[128], path[128];
	char *text;

	snprintf(tmpl, sizeof(tmpl), "%s/log", dir);
	snprintf(path, sizeof(path), "%s/log", dir);
	sink_init(&sk, tmpl, 1, "p", 0, on_report, &rep);
	ck_assert_int_eq(pipe(p), 0);
	d.pipe_rd = p[0];
	low = lowest_free();
	pthread_barrier_init(&d.opened, NULL, 2);
	pthread_barrier_init(&d.checked, NULL, 2);
	ck_assert_int_eq(pthread_create(&t, NULL, detached_main, &d), 0);
	pthread_barrier_wait(&d.opened);
	/* The thread holds an fd, and the program's lowest free is still
	 * free: the thread's fd is in a table of its own. */
	ck_assert_int_eq(d.detach_r, 0);
	ck_assert_int_ge(d.held, 0);
	ck_assert_int_eq(lowest_free(), low);
	/* It still sees the program's fds, and their absence. */
	ck_assert_int_eq(d.stat_r, 0);
	ck_assert_int_eq(fstat(p[0], &st), 0);
	ck_assert_uint_eq(d.seen.st_ino, st.st_ino);
	ck_assert_int_eq(d.stat_missing_r, -EBADF);
	ck_assert_int_eq(d.write_r, 0);
	pthread_barrier_wait(&d.checked);
	pthread_join(t, NULL);
	text = uu_slurp(path);
	ck_assert_str_eq(text, "from the ticker\n");
	free(text);
	close(p[0]);
	close(p[1]);
}
END_TEST

static void *stderr_main(void *p)
{
	int *r = p;

	progfd_detach();
	*r = sink_write(&sk, "record\n", 7);
	return NULL;
}

START_TEST(test_progfd_detached_thread_still_writes_to_the_program_stderr)
{
	char path[128];
	char *text;
	pthread_t t;
	int fd, r = -1, saved = dup(2);

	snprintf(path, sizeof(path), "%s/err", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(dup2(fd, 2), 2);
	close(fd);
	sink_init(&sk, "stderr", 1, "p", 0, on_report, &rep);
	ck_assert_int_eq(pthread_create(&t, NULL, stderr_main, &r), 0);
	pthread_join(t, NULL);
	dup2(saved, 2);
	close(saved);
	ck_assert_int_eq(r, 0);
	text = uu_slurp(path);
	ck_assert_str_eq(text, "record\n");
	free(text);
}
END_TEST

struct pinned {
	bool on;
	int pin_r, write_r, before_r;
	pthread_barrier_t pinned, moved;
};

static void *pinned_main(void *p)
{
	struct pinned *d = p;

	progfd_detach();
	d->pin_r = sink_pin(&sk, d->on);
	/* Pinned for later: still written by name until the name fails. */
	d->before_r = sink_write(&sk, "pinned\n", 7);
	pthread_barrier_wait(&d->pinned);
	pthread_barrier_wait(&d->moved);
	d->write_r = sink_write(&sk, "after\n", 6);
	return NULL;
}

/* A pinned log gets the records whatever becomes of its name (a chroot
 * hides it, a uid change would forbid opening it again). */
START_TEST(test_sink_pin_keeps_writing_to_the_file_whatever_its_name_becomes)
{
	struct pinned d = { .on = _i == 0 };
	char sub[128], tmpl[160], moved[160], *text;
	pthread_t t;

	snprintf(sub, sizeof(sub), "%s/a", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	snprintf(tmpl, sizeof(tmpl), "%s/log", sub);
	ck_assert_int_eq(sink_init(&sk, tmpl, 1, "p", 0, on_report, &rep), 0);
	ck_assert_int_eq(sink_write(&sk, "before\n", 7), 0);
	/* Only a thread with a table of its own may hold the file. */
	ck_assert_int_eq(sink_pin(&sk, true), -EINVAL);
	pthread_barrier_init(&d.pinned, NULL, 2);
	pthread_barrier_init(&d.moved, NULL, 2);
	ck_assert_int_eq(pthread_create(&t, NULL, pinned_main, &d), 0);
	pthread_barrier_wait(&d.pinned);
	snprintf(moved, sizeof(moved), "%s/b", dir);
	ck_assert_int_eq(rename(sub, moved), 0);
	/* The name is out of reach, the file writable through the pin. */
	ck_assert_int_eq(sink_reinit_for_uid(&sk, tmpl, 1, "p", 0), 0);
	pthread_barrier_wait(&d.moved);
	pthread_join(t, NULL);
	ck_assert_int_eq(d.pin_r, 0);
	ck_assert_int_eq(d.before_r, 0);
	ck_assert_int_eq(d.write_r, 0);
	ck_assert_int_ne(access(sub, F_OK), 0);
	snprintf(moved, sizeof(moved), "%s/b/log", dir);
	text = uu_slurp(moved);
	ck_assert_str_eq(text, "before\npinned\nafter\n");
	free(text);
	ck_assert_uint_eq(rep.n, 0);
}
END_TEST

/*
 * A pinned log that another program rotates or removes (pinned_fd): the
 * thread pins, writes one batch, then does what the test's step says
 * between the batches, each step on the main thread while it waits.
 *  0: renamed to log.1, a new log made: the next batch in the new file,
 *     nothing said;
 *  1: renamed to log.1, a directory made at the path (a file this uid
 *     cannot open): the batch in log.1, one warning naming the rotation;
 *  2: removed, and its directory too (nothing can be made again): the
 *     batch refused (-ENOENT), one warning, nothing written anywhere.
 */
struct rotated {
	int pin_r, first_r, second_r, third_r;
	unsigned said_after_second; /* warnings by then */
	pthread_barrier_t written, changed;
};

static void *rotated_main(void *p)
{
	struct rotated *d = p;

	progfd_detach();
	d->pin_r = sink_pin(&sk, true);
	d->first_r = sink_write(&sk, "first\n", 6);
	pthread_barrier_wait(&d->written);
	pthread_barrier_wait(&d->changed);
	d->second_r = sink_write(&sk, "second\n", 7);
	d->said_after_second = rep.n;
	d->third_r = sink_write(&sk, "third\n", 6);
	return NULL;
}

START_TEST(test_sink_pin_follows_a_rotation_and_refuses_a_removed_file)
{
	struct rotated d;
	char sub[128], tmpl[160], old[170], *text;
	pthread_t t;

	snprintf(sub, sizeof(sub), "%s/a", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	snprintf(tmpl, sizeof(tmpl), "%s/log", sub);
	snprintf(old, sizeof(old), "%s.1", tmpl);
	ck_assert_int_eq(sink_init(&sk, tmpl, 1, "p", 0, on_report, &rep), 0);
	pthread_barrier_init(&d.written, NULL, 2);
	pthread_barrier_init(&d.changed, NULL, 2);
	ck_assert_int_eq(pthread_create(&t, NULL, rotated_main, &d), 0);
	pthread_barrier_wait(&d.written);
	if (_i < 2) {
		ck_assert_int_eq(rename(tmpl, old), 0);
		if (_i == 0)
			close(open(tmpl, O_WRONLY | O_CREAT, 0600));
		else
			ck_assert_int_eq(mkdir(tmpl, 0700), 0);
	} else {
		ck_assert_int_eq(unlink(tmpl), 0);
		ck_assert_int_eq(rmdir(sub), 0);
	}
	pthread_barrier_wait(&d.changed);
	pthread_join(t, NULL);
	ck_assert_int_eq(d.pin_r, 0);
	ck_assert_int_eq(d.first_r, 0);
	if (_i == 0) {
		ck_assert_int_eq(d.second_r, 0);
		text = uu_slurp(old);
		ck_assert_str_eq(text, "first\n");
		free(text);
		text = uu_slurp(tmpl);
		ck_assert_str_eq(text, "second\nthird\n");
		free(text);
		ck_assert_uint_eq(rep.n, 0);
	} else if (_i == 1) {
		/* A new file refused is said at the second write that finds
		 * it so (the first may fall in the moment before logrotate
		 * gives it away); the records go on into the rotated one. */
		ck_assert_int_eq(d.second_r, 0);
		ck_assert_int_eq(d.third_r, 0);
		text = uu_slurp(old);
		ck_assert_str_eq(text, "first\nsecond\nthird\n");
		free(text);
		ck_assert_uint_eq(d.said_after_second, 0);
		ck_assert_uint_eq(rep.n, 1);
		ck_assert_ptr_nonnull(strstr(rep.last, "rotated while the process kept it open"));
	} else {
		ck_assert_int_eq(d.second_r, -ENOENT);
		ck_assert_int_eq(d.third_r, -ENOENT);
		ck_assert_uint_eq(rep.n, 1);
		ck_assert_ptr_nonnull(strstr(rep.last, "removed while the process kept it open"));
	}
	pthread_barrier_destroy(&d.written);
	pthread_barrier_destroy(&d.changed);
}
END_TEST

static TCase *tc_fdtable(void)
{
	TCase *tc = tcase_create("own fd table");

	tcase_add_unchecked_fixture(tc, uu_root_setup, uu_root_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_progfd_detached_thread_opens_outside_the_program_fd_table);
	tcase_add_test(tc, test_progfd_detached_thread_still_writes_to_the_program_stderr);
	/* 0: pinned now (a chroot); 1: for later (a uid change), turned on
	 * when the name is found unwritable. */
	tcase_add_loop_test(tc, test_sink_pin_keeps_writing_to_the_file_whatever_its_name_becomes, 0, 2);
	tcase_add_loop_test(tc, test_sink_pin_follows_a_rotation_and_refuses_a_removed_file, 0, 3);
	return tc;
}

int main(void)
{
	Suite *s = suite_create("sink");

	suite_add_tcase(s, tc_expand());
	suite_add_tcase(s, tc_files());
	suite_add_tcase(s, tc_stderr());
	suite_add_tcase(s, tc_rotation());
	suite_add_tcase(s, tc_fdtable());
	return uu_run(s);
}
