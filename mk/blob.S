/* The shim and its header, embedded in the ovni binary (cmd/blob.h). */
	.section .rodata
	.balign 16
	.globl shim_so_start, shim_so_end, shim_hdr_start, shim_hdr_end
shim_so_start:
	.incbin RT_SO
shim_so_end:
	.balign 16
shim_hdr_start:
	.incbin RT_HDR
shim_hdr_end:
	.section .note.GNU-stack,"",@progbits
