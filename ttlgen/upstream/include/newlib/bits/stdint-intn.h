/* newlib's exact-width signed types on 32-bit RISC-V (see ../stdint.h). glibc's headers
 * that declare them (<sys/types.h>) include this file under this name and guard. */
#ifndef _BITS_STDINT_INTN_H
#define _BITS_STDINT_INTN_H 1
typedef signed char int8_t;
typedef short int16_t;
typedef long int32_t;
typedef long long int64_t;
#endif
