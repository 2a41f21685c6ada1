// The runtime side of the API glue (include/ttlemu/api.hpp): what the generated
// kernel-API headers need beyond the compute and dataflow entry points.
#include "state.hpp"

namespace ttlemu {

void unsupported(const char* call, const char* what) {
    fail("config", std::string(call) + ": " + what + " (not modelled by the emulator)");
}

} // namespace ttlemu
