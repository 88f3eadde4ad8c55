/*
 * no_tls — optloop never opens a network connection, so libgit2's start-up
 * need not prepare one.
 *
 * optloop only works on local repositories: no fetch, no push, no remote at
 * all.  Two things Debian's libgit2 1.5 does inside git_libgit2_init() cost
 * every optloop command, which is a short process, for nothing:
 *
 *   1. It is built with mbedTLS and parses every certificate of
 *      /etc/ssl/certs/ca-certificates.crt (about 140): ~54 M instructions,
 *      15-20 ms, once 80 % of `optloop status`.  Here the two certificate
 *      loaders load nothing and fail with mbedTLS's "file I/O error";
 *      libgit2 treats a failed default-certificate load as "no CA chain" and
 *      goes on.  Should anything in this process ever open an HTTPS
 *      connection, verification fails for want of a trusted root: it can
 *      not connect unverified.
 *
 *   2. It calls libssh2_init(0), whose OpenSSL back end loads and registers
 *      OpenSSL's built-in engines (about 1 ms and 35 page faults here).
 *      Here it is called with LIBSSH2_INIT_NO_CRYPTO instead: OpenSSL 1.1
 *      and later set themselves up on first use, so an SSH connection would
 *      still work; it is just not prepared in advance.
 *
 * How the calls are redirected depends on the link (see the Makefile):
 *
 *   shared   these definitions live in the executable, so the dynamic linker
 *            binds libgit2's calls to them instead of libmbedx509's.  (The
 *            libssh2 call is left alone: the executable cannot reach the
 *            real libssh2_init without dlsym.)
 *   static   the archives define the same names, so the link renames
 *            libgit2's calls with --wrap: NAME is resolved to __wrap_NAME,
 *            and __real_NAME reaches the library's own.
 *
 * With a libgit2 built on OpenSSL or without SSH, nothing calls these and
 * they are inert.
 */

/* The library prototypes, with the certificate chain as an opaque pointer:
 * optloop does not depend on mbedTLS's or libssh2's headers, and the ABI of
 * a pointer is the same. */
#define NO_TLS_FILE_IO_ERROR (-0x2900) /* MBEDTLS_ERR_X509_FILE_IO_ERROR */
#define NO_SSH_INIT_NO_CRYPTO 0x0001   /* LIBSSH2_INIT_NO_CRYPTO */

#ifdef OPTLOOP_LINK_STATIC
#define NO_TLS(name) __wrap_##name
#else
#define NO_TLS(name) name
#endif

int NO_TLS(mbedtls_x509_crt_parse_file)(void *chain, const char *path);
int NO_TLS(mbedtls_x509_crt_parse_path)(void *chain, const char *path);

int NO_TLS(mbedtls_x509_crt_parse_file)(void *chain, const char *path)
{
	(void)chain;
	(void)path;
	return NO_TLS_FILE_IO_ERROR;
}

int NO_TLS(mbedtls_x509_crt_parse_path)(void *chain, const char *path)
{
	(void)chain;
	(void)path;
	return NO_TLS_FILE_IO_ERROR;
}

#ifdef OPTLOOP_LINK_STATIC
int __real_libssh2_init(int flags);
int __wrap_libssh2_init(int flags);

int __wrap_libssh2_init(int flags)
{
	return __real_libssh2_init(flags | NO_SSH_INIT_NO_CRYPTO);
}
#endif
