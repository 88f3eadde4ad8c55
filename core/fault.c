/* fault — SIGKILL at a named point when OPTLOOP_FAULT asks for it. */
#include "core/fault.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

void fault_point(const char *name)
{
	const char *want = getenv("OPTLOOP_FAULT");
	size_t n = strlen(name);
	if (!want || strncmp(want, name, n) != 0)
		return;
	if (want[n] == '\0')
		raise(SIGKILL);
	else if (!strcmp(want + n, ":stop"))
		raise(SIGSTOP); /* a writer paused mid-way, alive, for a test to look at */
}
