/*
 * staticexit - built statically (no program interpreter: no preload
 * reaches it), for t_exec_static.  Writes "static" and a newline to fd 1
 * (an inherited socket, in the test) and exits with status 5.
 */
#include <unistd.h>

int main(void)
{
	if (write(1, "static\n", 7) != 7)
		return 1;
	return 5;
}
