// Stand-in for SFPI's lltt.h (the TRISC replay-buffer intrinsics): declarations only, so
// the LLK headers that record and replay instruction sequences compile on the host. No
// body ever runs: the check compiles with -fsyntax-only.
#pragma once

#include <cstdint>

namespace lltt {

// Whether record() also executes the instructions it records.
enum ExecBool : bool { NoExec = false, Exec = true };

template <ExecBool exec = NoExec>
void record(std::uint32_t start, std::uint32_t length);

void replay(std::uint32_t start, std::uint32_t length);

// The REPLAY instruction word; constexpr upstream (LLK headers build constant tables of it),
// so it needs a body here: its value is never used.
constexpr std::uint32_t replay_insn(std::uint32_t start, std::uint32_t length) { return (start << 16) | length; }

}  // namespace lltt
