/* newlib's header of the exact-width types, which some LLK headers include by name. */
#include <stdint.h>
