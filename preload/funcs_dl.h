/*
 * funcs_dl.h - the real functions of one group of wrapped calls: the
 * dynamic loader's dlopen, wrapped in wrap_dlopen.c for the libraries it
 * loads with RTLD_DEEPBIND.  X(name, return type, parameter types), as
 * SM_REAL_FUNCS in preload.h.
 */
#ifndef SOCKMETER_FUNCS_DL_H
#define SOCKMETER_FUNCS_DL_H

#define SM_FUNCS_DL(X) X(dlopen, void *, (const char *, int))

#endif
