/*
 * funcs_names.h - the real functions of one group of wrapped calls: name lookups (getaddrinfo...).
 * X(name, return type, parameter types), as SM_REAL_FUNCS in preload.h.
 */
#ifndef SOCKMETER_FUNCS_NAMES_H
#define SOCKMETER_FUNCS_NAMES_H

#define SM_FUNCS_NAMES(X)

#endif
