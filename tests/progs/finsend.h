/* finsend.h - shared by tests/progs/finsend.c and its library. */
#ifndef FINSEND_H
#define FINSEND_H

#define FINSEND_MAIN 5
#define FINSEND_CXX 3000
#define FINSEND_DTOR 1000

void finsend_keep(int fd);

#endif
