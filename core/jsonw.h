/*
 * jsonw — a JSON document written piece by piece as it is produced: the
 * outer objects and arrays opened and closed here, the values inside them
 * dumped one at a time with jansson.  The text is byte for byte what
 * json_dump_callback would write for the whole tree with the same flags
 * (indentation, JSON_COMPACT, JSON_ENSURE_ASCII, JSON_REAL_PRECISION; keys
 * in the order written), so a document too big to hold as one tree reads
 * exactly as it would have.
 */
#ifndef OPTLOOP_JSONW_H
#define OPTLOOP_JSONW_H

#include <jansson.h>
#include <stdbool.h>

#define JSONW_MAX_DEPTH 16

struct jsonw {
	json_dump_callback_t write;
	void *data;
	size_t flags;
	int depth;			/* containers open */
	bool any[JSONW_MAX_DEPTH];	/* whether each open container has a member yet */
	char closer[JSONW_MAX_DEPTH];	/* the brace that closes it */
	/* jansson hands over a string in many small pieces: they are
	 * gathered here and written in blocks */
	char buf[16384];
	size_t len;
	bool write_failed;		/* write returned non-zero */
	bool dump_failed;		/* jansson could not dump a value (invalid UTF-8) */
};

/* Start a document written through write(buf, len, data) with jansson's
 * dump flags (JSON_SORT_KEYS has no effect: members come in the order
 * given).  Nothing is allocated; the text is written in blocks, the last
 * when the document is complete (the outermost container closed, or a
 * value written outside any). */
void jsonw_init(struct jsonw *w, size_t flags, json_dump_callback_t write, void *data);

/* Open an object or an array: the document itself, a member of the object
 * open (key not NULL) or an element of the array open (key NULL).  Nesting
 * deeper than JSONW_MAX_DEPTH is a BUG. */
int jsonw_object(struct jsonw *w, const char *key);
int jsonw_array(struct jsonw *w, const char *key);
/* Close the innermost container. */
int jsonw_close(struct jsonw *w);

/* A value as a member (key not NULL) or an element; the reference stays
 * the caller's (json_decref it). */
int jsonw_value(struct jsonw *w, const char *key, json_t *v);

/* Each returns 0, or -1 once a write or a dump failed (write_failed,
 * dump_failed say which); after a failure nothing more is written. */

#endif
