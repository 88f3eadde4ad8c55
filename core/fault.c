/* fault — SIGKILL at a named point when OPTLOOP_FAULT asks for it. */
#include "core/fault.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

void fault_point(const char *name)
{
	const char *want = getenv("OPTLOOP_FAULT");
	if (want && *want && strcmp(want, name) == 0)
		raise(SIGKILL);
}
