/*
 * no_tls — optloop never speaks TLS, so it does not load a CA bundle.
 *
 * Debian's libgit2 1.5 is built with mbedTLS and, inside git_libgit2_init(),
 * parses every certificate in /etc/ssl/certs/ca-certificates.crt (about 140
 * of them).  That is ~54 M instructions, 15-20 ms, on every start: 80 % of
 * `optloop status` and the larger part of `optloop log --commit`.  optloop
 * only works on local repositories (no fetch, no push, no remote at all).
 *
 * These two definitions live in the executable, so the dynamic linker binds
 * libgit2's calls to them instead of to libmbedx509's.  They load nothing
 * and fail with mbedTLS's "file I/O error" code; libgit2 treats a failed
 * default-certificate load as "no CA chain" and goes on.  Should anything in
 * this process ever open an HTTPS connection, certificate verification fails
 * for want of a trusted root: it can not connect unverified.  With a libgit2
 * built on OpenSSL (or a newer one that loads certificates lazily) nothing
 * calls these and they are inert.
 */

/* The mbedTLS prototypes, with the chain as an opaque pointer: optloop does
 * not depend on mbedTLS's headers, and the ABI of a pointer is the same. */
int mbedtls_x509_crt_parse_file(void *chain, const char *path);
int mbedtls_x509_crt_parse_path(void *chain, const char *path);

#define NO_TLS_FILE_IO_ERROR (-0x2900) /* MBEDTLS_ERR_X509_FILE_IO_ERROR */

int mbedtls_x509_crt_parse_file(void *chain, const char *path)
{
	(void)chain;
	(void)path;
	return NO_TLS_FILE_IO_ERROR;
}

int mbedtls_x509_crt_parse_path(void *chain, const char *path)
{
	(void)chain;
	(void)path;
	return NO_TLS_FILE_IO_ERROR;
}
