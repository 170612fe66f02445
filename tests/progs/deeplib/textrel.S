/*
 * textrel.S - a library with a text relocation (DT_TEXTREL: linked with
 * -z notext), loaded deep by tests/progs/deepbind (t_deepbind): its
 * tr_send jumps to send through an absolute address in its code, a word
 * in a page that is not writable.  x86-64 only.
 */
	.text
	.globl tr_send
	.type tr_send,@function
tr_send:
	movabs $send, %rax
	jmp *%rax
	.size tr_send, .-tr_send
	.section .note.GNU-stack,"",@progbits
