// Drives the generated MLIR adapter (KernelTargetEnvironments.gen.inc) against the stand-in for
// TT-Lang's headers, included the way the README tells TT-Lang to include it, and prints each
// environment its factories create and every answer of each, one JSON object per line.
// Usage: adapter_driver <architecture name>... -- <MLIR type name>...
#include "ttlang_standin.hpp"

#include "ttl_kernel_config/kernel_target_tables.hpp"

namespace mlir::tt::ttl {
namespace {
#include "ttl_kernel_config/KernelTargetEnvironments.gen.inc"
} // namespace
} // namespace mlir::tt::ttl

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace mlir::tt::ttl;
namespace adapter = mlir::tt::ttl::kernel_target_environments;
namespace tables = ::ttl_kernel_config;

void print_string(std::string_view text) {
    std::putchar('"');
    for (char ch : text) {
        if (ch == '"' || ch == '\\') {
            std::putchar('\\');
        }
        std::putchar(ch);
    }
    std::putchar('"');
}

void begin(const char* query, const std::string& environment) {
    std::printf("{\"query\":\"%s\",\"env\":", query);
    print_string(environment);
}

void key(const char* name) { std::printf(",\"%s\":", name); }

std::string_view mode_name(DFBUnpackMode mode) {
    for (tables::UnpackMode candidate : tables::kUnpackModes) {
        if (adapter::fromTables(candidate) == mode) {
            return tables::spec_name(candidate);
        }
    }
    return "?";
}

void print_environment(const std::string& label, const KernelTargetEnvironment& environment,
                       const std::vector<std::string>& types) {
    const DestinationElementWidth widths[] = {DestinationElementWidth::Bits16,
                                              DestinationElementWidth::Bits32};
    const TileOperandRoute routes[] = {TileOperandRoute::None, TileOperandRoute::DataflowBuffer,
                                       TileOperandRoute::Dst};
    for (int index = 0; index <= static_cast<int>(TilePrimitive::DstIndex); ++index) {
        auto primitive = static_cast<TilePrimitive>(index);
        std::string_view primitive_name = tables::spec_name(adapter::toTables(primitive));
        for (const std::string& type_name : types) {
            mlir::Type type(type_name);
            for (DestinationElementWidth width : widths) {
                begin("supports", label);
                key("primitive");
                print_string(primitive_name);
                key("type");
                print_string(type_name);
                key("width");
                std::printf("%u", tables::bits(adapter::toTables(width)));
                key("supported");
                bool supported = environment.supportsDestinationElementWidth(primitive, type, width);
                std::fputs(supported ? "true" : "false", stdout);
                std::fputs("}\n", stdout);
            }
            for (TileOperandRoute route : routes) {
                begin("configurations", label);
                key("primitive");
                print_string(primitive_name);
                key("type");
                print_string(type_name);
                key("route");
                print_string(tables::spec_name(adapter::toTables(route)));
                key("configurations");
                std::putchar('[');
                bool first = true;
                for (const DFBHardwareConfiguration& configuration :
                     environment.getSupportedDFBConfigurations(primitive, route, type)) {
                    std::printf(first ? "[%u," : ",[%u,",
                                tables::bits(adapter::toTables(configuration.destinationElementWidth)));
                    print_string(mode_name(configuration.unpackMode));
                    std::putchar(']');
                    first = false;
                }
                std::fputs("]}\n", stdout);
            }
        }
    }
    const FullFp32AccumulationKind kinds[] = {
        FullFp32AccumulationKind::Matmul, FullFp32AccumulationKind::ReduceRow,
        FullFp32AccumulationKind::ReduceColumn, FullFp32AccumulationKind::ReduceScalar};
    for (FullFp32AccumulationKind kind : kinds) {
        FullFp32AccumulationSupport support = environment.getFullFp32AccumulationSupport(kind);
        begin("full_fp32", label);
        key("kind");
        print_string(tables::spec_name(adapter::toTables(kind)));
        key("supported");
        std::fputs(support.supported ? "true" : "false", stdout);
        key("warning");
        if (support.fallbackWarning.has_value()) {
            print_string(std::string_view(support.fallbackWarning->data(),
                                          support.fallbackWarning->size()));
        } else {
            std::fputs("null", stdout);
        }
        std::fputs("}\n", stdout);
    }
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::optional<std::string>> architectures = {std::nullopt};
    int arg = 1;
    for (; arg < argc && std::string_view(argv[arg]) != "--"; ++arg) {
        architectures.emplace_back(std::string(argv[arg]));
    }
    if (arg == argc) {
        std::fputs("usage: adapter_driver <architecture name>... -- <MLIR type name>...\n", stderr);
        return 2;
    }
    std::vector<std::string> types(argv + arg + 1, argv + argc);
    std::vector<std::string> targets;
    for (const tables::TargetRecord* target : tables::kTargets) {
        targets.emplace_back(target->name);
    }
    targets.emplace_back("no_such_target");
    for (const std::string& name : targets) {
        std::unique_ptr<KernelTargetEnvironment> environment =
            adapter::createForTarget(mlir::StringRef(name));
        begin("environment", "target:" + name);
        key("created");
        std::fputs(environment ? "true" : "false", stdout);
        std::fputs("}\n", stdout);
        if (environment) {
            print_environment("target:" + name, *environment, types);
        }
    }
    for (const std::optional<std::string>& name : architectures) {
        std::optional<mlir::StringRef> attribute;
        if (name.has_value()) {
            attribute = mlir::StringRef(*name);
        }
        std::optional<std::string> error;
        mlir::FailureOr<std::unique_ptr<KernelTargetEnvironment>> environment =
            adapter::createForArchitecture(attribute,
                                           [&](const std::string& message) { error = message; });
        std::optional<unsigned> capacity = adapter::dfbCapacity(attribute);
        std::string label = "architecture:" + name.value_or("");
        begin("environment", label);
        key("created");
        std::fputs(environment.has_value() ? "true" : "false", stdout);
        key("error");
        if (error.has_value()) {
            print_string(*error);
        } else {
            std::fputs("null", stdout);
        }
        key("dfb_capacity");
        if (capacity.has_value()) {
            std::printf("%u", *capacity);
        } else {
            std::fputs("null", stdout);
        }
        std::fputs("}\n", stdout);
        if (environment.has_value()) {
            print_environment(label, **environment, types);
        }
    }
    return 0;
}
