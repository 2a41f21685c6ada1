// tt-metal splits the CB calls into this header; the emulator's common.h has them.
#pragma once
#include "compute_kernel_api/common.h"
