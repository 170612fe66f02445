/*
 * funcs_dl.h - the real functions of one group of wrapped calls: the
 * dynamic loader's dlopen and dlmopen, wrapped in wrap_dlopen.c for the
 * libraries they load with RTLD_DEEPBIND or into a namespace of their own.
 * X(name, return type, parameter types), as SM_REAL_FUNCS in preload.h.
 */
#ifndef SOCKMETER_FUNCS_DL_H
#define SOCKMETER_FUNCS_DL_H

#include <dlfcn.h>

#define SM_FUNCS_DL(X)                                                         \
	X(dlopen, void *, (const char *, int))                                 \
	X(dlmopen, void *, (Lmid_t, const char *, int))

#endif
