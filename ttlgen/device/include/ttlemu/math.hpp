// The emulator's math library: the host functions its SFPU unary routine evaluates, in
// one table. An API function computes one of them when the emulation spec binds it as
// {computes: <name>, call: "compute::sfpu_unary(function, ...)"}: `function` is then
// ttlemu::math::sfpu_unary::<name>. ttlgen/run.py MATH holds each name's float64 reference
// (a test keeps the two lists equal), so a new SFPU unary whose math is here is a spec
// edit only. Every function computes in fp32 on a DST value (NUMERICS.md).
#pragma once
#include <cmath>

// X(name, expression of float x)
#define TTLEMU_SFPU_UNARY(X)                                                                       \
    X(exp, std::exp(x))                                                                            \
    X(log, std::log(x))                                                                            \
    X(sqrt, std::sqrt(x))                                                                          \
    X(rsqrt, 1.0f / std::sqrt(x))                                                                  \
    X(tanh, std::tanh(x))                                                                          \
    X(sigmoid, 1.0f / (1.0f + std::exp(-x)))                                                       \
    X(silu, x / (1.0f + std::exp(-x)))                                                             \
    X(square, x* x)                                                                                \
    X(negative, -x)                                                                                \
    X(abs, std::fabs(x))                                                                           \
    X(relu, x > 0.0f ? x : 0.0f)                                                                   \
    X(acos, std::acos(x))                                                                          \
    X(asin, std::asin(x))                                                                          \
    X(atan, std::atan(x))                                                                          \
    X(cos, std::cos(x))                                                                            \
    X(sin, std::sin(x))                                                                            \
    X(tan, std::tan(x))                                                                            \
    X(ceil, std::ceil(x))                                                                          \
    X(floor, std::floor(x))                                                                        \
    X(trunc, std::trunc(x))                                                                        \
    X(frac, x - std::trunc(x))                                                                     \
    X(exp2, std::exp2(x))                                                                          \
    X(expm1, std::expm1(x))                                                                        \
    X(gelu, 0.5f * x * (1.0f + std::erf(x * 0.70710678f)))                                         \
    X(hardsigmoid, std::fmin(1.0f, std::fmax(0.0f, x / 6.0f + 0.5f)))                              \
    X(recip, 1.0f / x)                                                                             \
    X(sign, x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f))                                           \
    X(signbit, std::signbit(x) ? 1.0f : 0.0f)                                                      \
    X(softsign, x / (1.0f + std::fabs(x)))

namespace ttlemu::math::sfpu_unary {
enum Function : int {
#define TTLEMU_NAME(name, expression) name,
    TTLEMU_SFPU_UNARY(TTLEMU_NAME)
#undef TTLEMU_NAME
};

inline float evaluate(Function f, float x) {
    switch (f) {
#define TTLEMU_CASE(name, expression)                                                              \
    case name:                                                                                     \
        return expression;
        TTLEMU_SFPU_UNARY(TTLEMU_CASE)
#undef TTLEMU_CASE
    }
    return x;
}
} // namespace ttlemu::math::sfpu_unary
