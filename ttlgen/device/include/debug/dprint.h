// DPRINT for the host emulator: writes to stderr (the harness captures it).
#pragma once
#include <iostream>

namespace ttlemu {
struct DebugPrinter {
    template <typename T>
    DebugPrinter& operator<<(const T& value) {
        std::cerr << value;
        return *this;
    }
};
} // namespace ttlemu

#define DPRINT                                                                                     \
    ttlemu::DebugPrinter {}
#define DPRINT_UNPACK(x) x
#define DPRINT_MATH(x)   x
#define DPRINT_PACK(x)   x
#define DPRINT_DATA0(x)  x
#define DPRINT_DATA1(x)  x
inline const char* ENDL() {
    return "\n";
}
