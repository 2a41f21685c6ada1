// tt-metal splits the DST hand-over calls into this header; common.h has them.
#pragma once
#include "compute_kernel_api/common.h"
