/*
 * pyscan — the shape of a Python file without Python.
 *
 * The text is cut into tokens (names, operators, strings and numbers:
 * comments and the insides of strings are gone, so an "import" in an
 * f-string is text, not an import) and logical lines (a bracket or a
 * backslash continues a line).  From the lines come the file's imports,
 * wherever they stand, and its module-level names: each def and class
 * (with its decorators and body) and each assignment at module level,
 * counting those inside a module-level if or try.  What a range of lines
 * refers to is every name in it that is not an attribute (after a dot), a
 * keyword argument or a keyword.
 *
 * The tokens point into the text: it must outlive the py_file.
 */
#ifndef OPTLOOP_PYSCAN_H
#define OPTLOOP_PYSCAN_H

#include <stdbool.h>
#include <stddef.h>

enum { PT_NAME, PT_OP, PT_STR, PT_NUM };

struct py_tok {
	const char *s;
	unsigned len;
	unsigned char kind;
};

struct py_line {
	unsigned first, ntok; /* its tokens */
	unsigned indent;      /* columns, a tab to the next multiple of 8 */
	bool module;          /* module-level code: no def, class, import or decorator */
};

enum { PD_DEF, PD_CLASS, PD_ASSIGN };

struct py_def {
	char *name;
	unsigned line0, line1; /* logical lines [line0, line1), decorators first */
	unsigned char kind;
};

/* "from MODULE import NAME as ALIAS", "from MODULE import *" (name "*"),
 * or "import MODULE as ALIAS" (name NULL); module keeps its leading dots. */
struct py_import {
	char *module, *name, *alias;
	bool in_def; /* inside a def or class: imported when that runs */
};

struct py_file {
	struct py_tok *tok;
	size_t ntok;
	struct py_line *line;
	size_t nline;
	struct py_def *def;
	size_t ndef;
	struct py_import *imp;
	size_t nimp;
};

void py_scan(const char *text, struct py_file *out);
void py_file_release(struct py_file *f);

/* The first module-level definition of name at or after index from; -1
 * when there is none. */
int py_def_find(const struct py_file *f, const char *name, int from);

/* Whether token t is the name s. */
bool py_tok_is(const struct py_tok *t, const char *s);

/* Every name lines [a, b) refer to, in order, with the attribute after it
 * where one follows ("X.apply": name X, attr apply; else attr NULL).  The
 * name and attr are not NUL-terminated: n and an give their lengths. */
typedef void (*py_ref_fn)(void *ctx, const char *name, size_t n, const char *attr, size_t an);
void py_refs(const struct py_file *f, unsigned a, unsigned b, py_ref_fn fn, void *ctx);
/* The same for the tokens [first, end) of one line. */
void py_refs_tokens(const struct py_file *f, unsigned first, unsigned end, py_ref_fn fn,
		    void *ctx);

/* The token of line l's top-level "=" (with augmented, also "+=" and
 * its kin), 0 when it assigns nothing. */
unsigned py_assign_at(const struct py_file *f, unsigned l, bool augmented);

/* The first line after line l's block (the lines indented deeper). */
unsigned py_block_end(const struct py_file *f, unsigned l);

/* The tokens of the comma-separated argument k (from 0) of the call whose
 * opening parenthesis is token open: [*first, *end); false when the call
 * has no such argument. */
bool py_call_arg(const struct py_file *f, unsigned open, unsigned k, unsigned *first,
		 unsigned *end);

/* Whether the file runs a Triton kernel of its own (a def decorated with
 * a jit launched as NAME[grid](...)) or defines a torch.autograd.Function:
 * kernel code, as opposed to a plain utility (helpers, math inlined into
 * other kernels, caches, decorators). */
bool py_is_kernel_code(const struct py_file *f);

#endif
