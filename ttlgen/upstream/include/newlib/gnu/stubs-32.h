/* glibc's <gnu/stubs.h> includes this for -m32; the host has no 32-bit glibc and the
 * check needs none of its stubs. */
