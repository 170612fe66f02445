/*
 * funcs_exit.h - the real functions of one group of wrapped calls: _exit, _Exit and the exec family.
 * X(name, return type, parameter types), as SM_REAL_FUNCS in preload.h.
 */
#ifndef SOCKMETER_FUNCS_EXIT_H
#define SOCKMETER_FUNCS_EXIT_H

#define SM_FUNCS_EXIT(X)

#endif
