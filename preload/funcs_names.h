/*
 * funcs_names.h - the real functions of one group of wrapped calls: name
 * lookups (getaddrinfo, gethostbyname...), wrapped in wrap_names.c.
 * X(name, return type, parameter types), as SM_REAL_FUNCS in preload.h.
 */
#ifndef SOCKMETER_FUNCS_NAMES_H
#define SOCKMETER_FUNCS_NAMES_H

#include <netdb.h>

#define SM_FUNCS_NAMES(X)                                                      \
	X(getaddrinfo, int,                                                    \
	  (const char *, const char *, const struct addrinfo *,                \
	   struct addrinfo **))                                                \
	X(gethostbyname, struct hostent *, (const char *))                     \
	X(gethostbyname2, struct hostent *, (const char *, int))               \
	X(gethostbyname_r, int,                                                \
	  (const char *, struct hostent *, char *, size_t, struct hostent **,  \
	   int *))

#endif
