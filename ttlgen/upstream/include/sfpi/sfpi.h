// Stand-in for SFPI's sfpi.h, the C++ front end of the SFPU compiler: vector types held in
// the SFPU's local registers, the DST register file, lane-predicated control flow
// (v_if ... v_endif) and the library of SFPU operations. tt-metal's JIT downloads SFPI
// with its RISC-V toolchain; the ttnn wheel does not ship it, so ttlgen's host compile of
// a kernel (ttlgen/upstream/jit.py) includes this file instead.
//
// Declarations only: no function here has a body that computes anything (the check
// compiles with -fsyntax-only, nothing is ever run). What it declares is what tt-metal's
// LLK headers use, with types loose enough that SFPU code parses and instantiates: every
// vector type converts to every other, and an operation on a vector yields a vector. So a
// compile against it checks everything around SFPI (the kernel's calls, the compute API,
// the LLK templates they instantiate) but not SFPI's own typing rules.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "lltt.h"
#include "sfpi_constants.h"

#define sfpi_inline inline

namespace sfpi {

enum class LRegs : unsigned { LReg0, LReg1, LReg2, LReg3, LReg4, LReg5, LReg6, LReg7, LRegCount };
enum class DataLayout : unsigned { Default, F32, FSrcB, F16a, F16b, I32, U32, U16, U8, M32, SM32, ROW_MAJOR, TILE };
enum class RoundMode : unsigned { Nearest, NearestAway, NearestEven, NearestStochastic, ToZero, Stochastic };
enum class ExponentMode : unsigned { Debiased, Biased };
enum class MantissaMode : unsigned { ImplicitOne, NoImplicitOne, Pad8, Pad9 };
enum class ShiftMode : unsigned { Logical, Arithmetic };
enum class LutSign : unsigned { Update, Retain };
enum class FractionalHalf : unsigned { Low, High };

class vBool;

namespace standin {

// The vector classes derive from this, so templates can tell a vector from a scalar.
struct vector_tag {};

// The compiler's own vector value (__rvtt_vec_t), which get() yields and builtins take.
struct raw {};

template <class T>
inline constexpr bool is_vector = std::is_base_of_v<vector_tag, std::decay_t<T>>;

template <class A, class B>
inline constexpr bool has_vector = is_vector<A> || is_vector<B>;

// What an operation on two operands yields: the first vector operand's type.
template <class A, class B>
using result_t = std::conditional_t<is_vector<A>, std::decay_t<A>, std::decay_t<B>>;

// Common operations of every vector type V: assignment from anything, compound
// assignment, increment and decrement.
template <class V>
struct vector : vector_tag {
    template <class T>
    V& operator=(const T&);
    template <class T>
    V& operator+=(const T&);
    template <class T>
    V& operator-=(const T&);
    template <class T>
    V& operator*=(const T&);
    template <class T>
    V& operator&=(const T&);
    template <class T>
    V& operator|=(const T&);
    template <class T>
    V& operator^=(const T&);
    template <class T>
    V& operator<<=(const T&);
    template <class T>
    V& operator>>=(const T&);
    V operator++(int);
    V& operator++();
    V operator--(int);
    V& operator--();
    raw get() const;
};

}  // namespace standin

// Declares a vector type: constructible from any scalar or vector, as the loose typing
// described above.
#define TTLGEN_SFPI_VECTOR(NAME)                                                               \
    class NAME : public standin::vector<NAME> {                                                \
    public:                                                                                    \
        NAME();                                                                                \
        NAME(const NAME&);                                                                     \
        template <class T, class = std::enable_if_t<!std::is_same_v<std::decay_t<T>, NAME>>>  \
        NAME(const T&);                                                                        \
        template <class A, class B, class... C> /* a LUT register: two or more entries */     \
        NAME(const A&, const B&, const C&...);                                                 \
        NAME& operator=(const NAME&);                                                          \
        using standin::vector<NAME>::operator=;                                                \
    }

TTLGEN_SFPI_VECTOR(vFloat);
TTLGEN_SFPI_VECTOR(vInt);
TTLGEN_SFPI_VECTOR(vUInt);
TTLGEN_SFPI_VECTOR(vMag);
TTLGEN_SFPI_VECTOR(vSMag);
TTLGEN_SFPI_VECTOR(vFloat16a);
TTLGEN_SFPI_VECTOR(vFloat16b);
TTLGEN_SFPI_VECTOR(vUInt16);
TTLGEN_SFPI_VECTOR(vUInt8);
TTLGEN_SFPI_VECTOR(vSMag16);
TTLGEN_SFPI_VECTOR(vSMag8);
// Look-up-table operands of lut(): pairs of 8- or 16-bit values held in one register.
TTLGEN_SFPI_VECTOR(vLut8si);
TTLGEN_SFPI_VECTOR(vLut16ss);
TTLGEN_SFPI_VECTOR(vLut16ii);
TTLGEN_SFPI_VECTOR(vLut16si);

// A lane predicate: the result of a comparison, combined with &&, || and !.
class vBool {
public:
    vBool();
    template <class T>
    vBool(const T&);
};
vBool operator&&(const vBool&, const vBool&);
vBool operator||(const vBool&, const vBool&);
vBool operator!(const vBool&);

// A register of the DST file or a local register, as an operand: a vector of any type.
class vReg : public standin::vector<vReg> {
public:
    vReg(const vReg&);
    template <class T>
    vReg& operator=(const T&);
    vReg& operator=(const vReg&);
    template <DataLayout layout = DataLayout::Default, class... A>
    vReg mode(A...) const;
    // Marks a local register as taken, so the compiler allocates around it.
    void in_use() const;
};

namespace standin {

struct DstRegFile {
    vReg operator[](int) const;
    DstRegFile& operator++();
    DstRegFile operator++(int);
    template <class T>
    DstRegFile& operator+=(const T&);
};

struct LRegFile {
    vReg operator[](LRegs) const;
};

}  // namespace standin

extern standin::DstRegFile dst_reg;
extern standin::LRegFile l_reg;

// The SFPU's constant registers (the programmable ones are assignable).
extern const vFloat vConst0;
extern const vFloat vConst1;
extern const vFloat vConstNeg1;
extern const vFloat vConst0p8373;
extern vFloat vConstFloatPrgm0;
extern vFloat vConstFloatPrgm1;
extern vFloat vConstFloatPrgm2;
extern vInt vConstIntPrgm0;
extern vInt vConstIntPrgm1;
extern vInt vConstIntPrgm2;
extern const vInt vConstTileId;

// Scalar containers of fp16 bit patterns, for loading a vector.
class sFloat16a {
public:
    template <class T>
    explicit sFloat16a(T);
};
class sFloat16b {
public:
    template <class T>
    explicit sFloat16b(T);
};
using s2vFloat16a = sFloat16a;
using s2vFloat16b = sFloat16b;

// Arithmetic, bitwise and shift operators on vectors (and a vector with a scalar).
#define TTLGEN_SFPI_BINARY(OP)                                                   \
    template <class A, class B, class = std::enable_if_t<standin::has_vector<A, B>>> \
    standin::result_t<A, B> operator OP(const A&, const B&)
TTLGEN_SFPI_BINARY(+);
TTLGEN_SFPI_BINARY(-);
TTLGEN_SFPI_BINARY(*);
TTLGEN_SFPI_BINARY(&);
TTLGEN_SFPI_BINARY(|);
TTLGEN_SFPI_BINARY(^);
TTLGEN_SFPI_BINARY(<<);
TTLGEN_SFPI_BINARY(>>);
#undef TTLGEN_SFPI_BINARY

#define TTLGEN_SFPI_COMPARE(OP)                                                  \
    template <class A, class B, class = std::enable_if_t<standin::has_vector<A, B>>> \
    vBool operator OP(const A&, const B&)
TTLGEN_SFPI_COMPARE(<);
TTLGEN_SFPI_COMPARE(<=);
TTLGEN_SFPI_COMPARE(>);
TTLGEN_SFPI_COMPARE(>=);
TTLGEN_SFPI_COMPARE(==);
TTLGEN_SFPI_COMPARE(!=);
#undef TTLGEN_SFPI_COMPARE

template <class V, class = std::enable_if_t<standin::is_vector<V>>>
V operator-(const V&);
template <class V, class = std::enable_if_t<standin::is_vector<V>>>
V operator+(const V&);
template <class V, class = std::enable_if_t<standin::is_vector<V>>>
V operator~(const V&);

// Reinterpretation and conversion between vector types.
template <class To, class From>
To as(const From&);
template <class To, class From>
To reinterpret(const From&);
template <class To, RoundMode mode = RoundMode::Nearest, class... A>
To convert(const A&...);

// The SFPU's operations.
template <class V, class... A>
std::decay_t<V> abs(const V&, const A&...);
template <class A, class B>
standin::result_t<A, B> min(const A&, const B&);
template <class A, class B>
standin::result_t<A, B> max(const A&, const B&);
template <class A, class B>
std::pair<standin::result_t<A, B>, standin::result_t<A, B>> min_max(const A&, const B&);
template <class A, class B>
void vec_min_max(A&, B&);
template <class V, class... A>
std::decay_t<V> clamp(const V&, const A&...);
template <class V, class L>
std::decay_t<V> symmetric_clamp(const V&, const L&);
template <class... A>
vInt exexp(const A&...);
template <class... A>
vInt exexp_nodebias(const A&...);
template <class... A>
vInt exman(const A&...);
template <class... A>
vInt exman8(const A&...);
template <class... A>
vInt exman9(const A&...);
template <class... A>
vFloat setexp(const A&...);
template <class... A>
vFloat setman(const A&...);
template <class... A>
vFloat setsgn(const A&...);
template <class... A>
vFloat setsgn2(const A&...);
template <class... A>
vFloat copysgn(const A&...);
template <class... A>
vFloat copyman(const A&...);
template <class... A>
vFloat addexp(const A&...);
template <class... A>
vFloat approx_recip(const A&...);
template <class... A>
vFloat lut(const A&...);
template <class... A>
vFloat lut2(const A&...);
template <class... A>
vFloat lut2_sign(const A&...);
template <class V, class... A>
std::decay_t<V> shft(const V&, const A&...);
template <class V>
std::decay_t<V> subvec_shflror1(const V&);
template <class V>
std::decay_t<V> subvec_shflshr1(const V&);
template <class... A>
void subvec_transp(A&...);
template <class... A>
vInt lz(const A&...);
template <class... A>
vInt lz_nosgn(const A&...);
template <class... A>
vInt fractional_mul(const A&...);
template <class... A>
vFloat int32_to_float(const A&...);
template <class... A>
vUInt float_to_fp16a(const A&...);
template <class... A>
vUInt float_to_fp16b(const A&...);
template <class... A>
vUInt float_to_uint8(const A&...);
template <class... A>
vInt float_to_int8(const A&...);
template <class... A>
vUInt float_to_uint16(const A&...);
template <class... A>
vInt float_to_int16(const A&...);
template <class... A>
vBool nearby(const A&...);
template <class V>
vBool is_inf(const V&);
template <class V>
vBool is_nan(const V&);
template <class V>
vBool is_finite(const V&);
template <class V>
vBool is_pos(const V&);
template <class V>
vBool is_neg(const V&);

// Asks the compiler to keep the local registers free while it lives.
class lreg_pressure {
public:
    lreg_pressure();
};

namespace standin {

// The lane predicate state of one v_if ... v_endif.
struct Predicate {
    template <class C>
    bool test(const C&);
};

}  // namespace standin

}  // namespace sfpi

// The compiler's SFPU builtins that LLK headers call directly.
template <class... A>
sfpi::standin::raw __builtin_rvtt_sfpmad(const A&...);
template <class... A>
sfpi::standin::raw __builtin_rvtt_sfpgt(const A&...);

#define v_if(cond)                         \
    {                                      \
        ::sfpi::standin::Predicate __pred; \
        if (__pred.test(cond)) {
#define v_elseif(cond) \
    }                  \
    else if (__pred.test(cond)) {
#define v_else \
    }          \
    else {
#define v_endif \
    }           \
    }
#define v_block                            \
    {                                      \
        ::sfpi::standin::Predicate __pred; \
        {
#define v_endblock \
    }              \
    }
#define v_and(cond) __pred.test(cond)
