/*
 * traps — the TRAPS.md catalogue: known ways an optimization fools its own
 * measurement, each with a Fact, a Why and a How to apply.
 *
 * traps_parse reads any TRAPS.md, hand-written ones included: `## Title`
 * headings (an optional `{#id}` suffix fixes the id, otherwise it is the
 * title's slug), fields written `**Fact:**`, `**Fact**:`, or as list items,
 * values over several lines and paragraphs, code fences.  An entry without
 * its own heading (a bold-field block right after the document title, or a
 * second Fact inside one section) becomes an entry of its own, titled from
 * its Fact.  traps_render writes the catalogue back so that parsing the
 * result gives the same entries.
 */
#ifndef OPTLOOP_TRAPS_H
#define OPTLOOP_TRAPS_H

#include "core/model.h"

#include <stddef.h>

struct err;
struct sb;

/* Append the whole file text for d to out. */
void traps_render(const struct traps_doc *d, struct sb *out);

/* Add an entry; all of title, fact, why and how are required (ERR_USAGE
 * naming what is missing), in plain text (ERR_USAGE naming a control or
 * bidirectional character and where it is: vis_check), the id is the title's slug made unique.  The new
 * entry's id is returned in *id_out when not NULL (points into d). */
int traps_add(struct traps_doc *d, const char *title, const char *fact, const char *why,
	      const char *how, const char **id_out, struct err *e);

/* Read the shipped seed catalogue (assets/TRAPS.md) into *d. */
int traps_seed(struct traps_doc *d, struct err *e);

/* "Int64 address arithmetic" -> "int64-address-arithmetic".  Caller frees. */
char *traps_slug(const char *title);


#endif
