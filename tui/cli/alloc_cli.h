/*
 * alloc_cli — the Slurm allocation in status's words and JSON (the same
 * loop_allocation the workbench shows).
 */
#ifndef OPTLOOP_ALLOC_CLI_H
#define OPTLOOP_ALLOC_CLI_H

#include <jansson.h>
#include <stdio.h>

struct loop;

/* Add "allocation": {runner, slurm, held, job, state, reason, node, ...}
 * to j. */
void alloc_cli_add(struct loop *l, json_t *j);
/* Print "runner:    ..." and, with Slurm, "allocation: ..." lines. */
void alloc_cli_print(struct loop *l, FILE *out);

#endif
