/*
 * bench_startup — the start-up cost of the binary, the floor under every
 * CLI step an agent takes: `optloop version` as a whole process, started
 * with posix_spawn and reaped with wait4, timed from the spawn to the reap
 * (CLOCK_MONOTONIC), 200 runs after 10 unmeasured ones.  No shell stands
 * between: a loop in bash adds bash's own fork of itself to every figure.
 * /bin/true timed the same way is printed beside it, the cost of any
 * process on this machine.  Target: a median under 10 ms.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define RUNS 200
#define WARMUP 10
#define TARGET_MS 10.0

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One run of argv: its wall time and CPU time (user + system) in ms; -1
 * when it could not be started or did not exit 0. */
static int run_once(char *const argv[], double *wall, double *cpu)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status, rc;
	struct rusage ru;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	double t0 = now_ms();
	rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		fprintf(stderr, "bench startup: cannot start %s: %s\n", argv[0], strerror(rc));
		return -1;
	}
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR)
			return -1;
	*wall = now_ms() - t0;
	*cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench startup: %s did not exit 0\n", argv[0]);
		return -1;
	}
	return 0;
}

/* Median wall and CPU time of RUNS runs of argv; -1 on a failed run. */
static int measure(char *const argv[], double *wall_med, double *cpu_med, double *wall_min)
{
	static double wall[RUNS], cpu[RUNS];
	double w, c;
	for (int i = 0; i < WARMUP; i++)
		if (run_once(argv, &w, &c) < 0)
			return -1;
	for (int i = 0; i < RUNS; i++)
		if (run_once(argv, &wall[i], &cpu[i]) < 0)
			return -1;
	qsort(wall, RUNS, sizeof(*wall), cmp_double);
	qsort(cpu, RUNS, sizeof(*cpu), cmp_double);
	*wall_med = (wall[RUNS / 2 - 1] + wall[RUNS / 2]) / 2;
	*cpu_med = (cpu[RUNS / 2 - 1] + cpu[RUNS / 2]) / 2;
	*wall_min = wall[0];
	return 0;
}

int main(void)
{
	const char *bin = getenv("OPTLOOP");
	if (!bin || !*bin) {
		fprintf(stderr, "bench startup: OPTLOOP must name the binary\n");
		return 2;
	}
	char *opt[] = {(char *)bin, "version", NULL};
	char *tru[] = {"/bin/true", NULL};
	double w, c, lo, tw, tc, tlo;
	if (measure(opt, &w, &c, &lo) < 0) {
		printf("bench startup: optloop version failed to run [target < %.0f ms] MISS\n",
		       TARGET_MS);
		return 0;
	}
	if (measure(tru, &tw, &tc, &tlo) < 0)
		tw = tc = tlo = 0;
	printf("bench startup: %.2f ms median per 'optloop version' process (min %.2f, CPU %.2f) "
	       "over %d runs; /bin/true %.2f ms (CPU %.2f) [target < %.0f ms] %s\n",
	       w, lo, c, RUNS, tw, tc, TARGET_MS, w < TARGET_MS ? "PASS" : "MISS");
	return 0;
}
