// A stand-in for what the generated KernelTargetEnvironments.gen.inc uses of MLIR, LLVM and
// TT-Lang's ComputeKernelConfigAnalysis.h (KernelTargetEnvironment generation B), so that the
// adapter compiles and runs here without TT-Lang. Declarations follow the real ones; bodies
// are the least that behaves alike. Not generated: it stands for TT-Lang's headers.
#ifndef TTLGEN_TESTS_TTLANG_STANDIN_HPP
#define TTLGEN_TESTS_TTLANG_STANDIN_HPP

#include <cassert>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace llvm {

class StringRef {
  public:
    StringRef() = default;
    StringRef(const char* data) : data_(data), size_(std::char_traits<char>::length(data)) {}
    StringRef(const std::string& text) : data_(text.data()), size_(text.size()) {}
    const char* data() const { return data_; }
    std::size_t size() const { return size_; }
    std::string str() const { return std::string(data_, size_); }

  private:
    const char* data_ = "";
    std::size_t size_ = 0;
};

template <typename T, unsigned N>
class SmallVector {
  public:
    void push_back(T value) { items_.push_back(std::move(value)); }
    std::size_t size() const { return items_.size(); }
    typename std::vector<T>::const_iterator begin() const { return items_.begin(); }
    typename std::vector<T>::const_iterator end() const { return items_.end(); }

  private:
    std::vector<T> items_;
};

} // namespace llvm

namespace mlir {

using llvm::SmallVector;
using llvm::StringRef;

class [[nodiscard]] LogicalResult {
  public:
    static LogicalResult success() { return LogicalResult(true); }
    static LogicalResult failure() { return LogicalResult(false); }
    bool failed() const { return !succeeded_; }

  private:
    explicit LogicalResult(bool succeeded) : succeeded_(succeeded) {}
    bool succeeded_;
};

inline LogicalResult failure() { return LogicalResult::failure(); }

template <typename T>
class [[nodiscard]] FailureOr : public std::optional<T> {
  public:
    FailureOr(LogicalResult result) : std::optional<T>() { assert(result.failed()); }
    FailureOr(T&& value) : std::optional<T>(std::move(value)) {}
    template <typename U, std::enable_if_t<std::is_constructible<T, U>::value>* = nullptr>
    FailureOr(U&& value) : std::optional<T>(std::forward<U>(value)) {}
};

// A builtin type, by how MLIR prints it (f32, bf16, si32, ui16, i1, index, ...).
class Type {
  public:
    explicit Type(std::string name) : name_(std::move(name)) {}
    bool isF32() const { return name_ == "f32"; }
    bool isBF16() const { return name_ == "bf16"; }
    bool isF16() const { return name_ == "f16"; }
    bool isInteger(unsigned width) const {
        return isSignlessInteger(width) || isSignedInteger(width) || isUnsignedInteger(width);
    }
    bool isSignlessInteger(unsigned width) const { return name_ == "i" + std::to_string(width); }
    bool isSignedInteger(unsigned width) const { return name_ == "si" + std::to_string(width); }
    bool isUnsignedInteger(unsigned width) const { return name_ == "ui" + std::to_string(width); }
    bool isIndex() const { return name_ == "index"; }
    bool isIntOrIndex() const { return integerWidth() != 0 || isIndex(); }
    bool isIntOrFloat() const { return integerWidth() != 0 || floatWidth() != 0; }
    // Asserts, as MLIR's does, on a type that is neither.
    unsigned getIntOrFloatBitWidth() const {
        assert(isIntOrFloat());
        return integerWidth() != 0 ? integerWidth() : floatWidth();
    }

  private:
    // The width of iN, siN or uiN; 0 for any other type.
    unsigned integerWidth() const {
        for (std::string prefix : {"si", "ui", "i"}) {
            if (name_.compare(0, prefix.size(), prefix) == 0 && name_.size() > prefix.size() &&
                name_.find_first_not_of("0123456789", prefix.size()) == std::string::npos) {
                return static_cast<unsigned>(std::stoul(name_.substr(prefix.size())));
            }
        }
        return 0;
    }
    // The width of one of MLIR's float types; 0 for any other type.
    unsigned floatWidth() const {
        static const std::pair<const char*, unsigned> floats[] = {
            {"f8E4M3FN", 8}, {"f8E5M2", 8}, {"bf16", 16}, {"f16", 16},  {"tf32", 19},
            {"f32", 32},     {"f64", 64},   {"f80", 80},  {"f128", 128}};
        for (const auto& [name, width] : floats) {
            if (name_ == name) {
                return width;
            }
        }
        return 0;
    }

    std::string name_;
};

namespace tt::ttl {

enum class TilePrimitive {
    Unknown,
    Copy,
    ElementwiseBinary,
    ElementwiseUnary,
    BroadcastColumn,
    BroadcastRow,
    BroadcastScalar,
    Reduce,
    Transpose,
    Fill,
    Matmul,
    Store,
    DstIndex,
};
enum class TileOperandRoute { None, DataflowBuffer, Dst };
enum class FullFp32AccumulationKind { Matmul, ReduceRow, ReduceColumn, ReduceScalar };
enum class DestinationElementWidth { Bits16, Bits32 };
enum class DFBUnpackMode { Default, UnpackToDestination };

struct FullFp32AccumulationSupport {
    bool supported;
    std::optional<llvm::StringRef> fallbackWarning;
};

struct DFBHardwareConfiguration {
    DestinationElementWidth destinationElementWidth;
    DFBUnpackMode unpackMode;
};

class KernelTargetEnvironment {
  public:
    virtual ~KernelTargetEnvironment() = default;
    virtual bool supportsDestinationElementWidth(TilePrimitive primitive, mlir::Type elementType,
                                                 DestinationElementWidth width) const = 0;
    virtual FullFp32AccumulationSupport
    getFullFp32AccumulationSupport(FullFp32AccumulationKind kind) const = 0;
    virtual llvm::SmallVector<DFBHardwareConfiguration, 4>
    getSupportedDFBConfigurations(TilePrimitive primitive, TileOperandRoute route,
                                  mlir::Type elementType) const = 0;

  protected:
    KernelTargetEnvironment() = default;
};

} // namespace tt::ttl
} // namespace mlir

#endif // TTLGEN_TESTS_TTLANG_STANDIN_HPP
