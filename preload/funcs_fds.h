/*
 * funcs_fds.h - the real functions of one group of wrapped calls: fd-creating calls (open, pipe, eventfd...), and stdio closes.
 * X(name, return type, parameter types), as SM_REAL_FUNCS in preload.h.
 */
#ifndef SOCKMETER_FUNCS_FDS_H
#define SOCKMETER_FUNCS_FDS_H

#define SM_FUNCS_FDS(X)

#endif
