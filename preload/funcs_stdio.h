/*
 * funcs_stdio.h - the real functions of one group of wrapped calls: stdio on sockets, splice, tee, vmsplice.
 * X(name, return type, parameter types), as SM_REAL_FUNCS in preload.h.
 */
#ifndef SOCKMETER_FUNCS_STDIO_H
#define SOCKMETER_FUNCS_STDIO_H

#define SM_FUNCS_STDIO(X)

#endif
