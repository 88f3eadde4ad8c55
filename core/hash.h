/*
 * hash — a fast 64-bit hash of bytes, for change detection and hash
 * tables (not for security): OPT_LOG.md's record of what optloop wrote,
 * the FLA file cache's buckets.  Its values are stored (meta
 * 'optlog_written'): changing the function makes every recorded file take
 * the full comparison once.
 */
#ifndef OPTLOOP_HASH_H
#define OPTLOOP_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t hash64(const void *data, size_t n);

#endif
