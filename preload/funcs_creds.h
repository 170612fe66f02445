/*
 * funcs_creds.h - the real functions of one group of wrapped calls: credential changes (setuid...) and syscall().
 * X(name, return type, parameter types), as SM_REAL_FUNCS in preload.h.
 */
#ifndef SOCKMETER_FUNCS_CREDS_H
#define SOCKMETER_FUNCS_CREDS_H

#define SM_FUNCS_CREDS(X)

#endif
