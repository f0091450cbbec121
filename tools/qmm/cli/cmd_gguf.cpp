// qmm gguf FILE: validate a GGUF file and print its header, metadata and tensors.
#include <cstdio>
#include <string>

#include "args.h"
#include "gguf/gguf.h"
#include "verbs.h"

namespace qmm::cli {

int cmd_gguf(int argc, char** argv) {
  std::string path;
  bool no_tensors = false;
  Args args("gguf",
            "Validate a GGUF file (every count, offset, type and shape; a bad file is a one-line error, exit 1)\n"
            "and print its header, metadata (arrays: type, length, first elements) and tensors.",
            argc - 1, argv + 1);
  args.positional("FILE", &path, "GGUF file").flag("--no-tensors", &no_tensors, "skip the tensor list");
  args.parse();
  const gguf::File f = gguf::File::open(path);
  std::printf("%s: GGUF v%u, %zu bytes, alignment %zu, data at %zu, %zu keys, %zu tensors\n", path.c_str(),
              f.version(), f.file_size(), f.alignment(), f.data_offset(), f.keys().size(), f.tensors().size());
  for (std::string_view k : f.keys()) {
    std::printf("  %-44.*s %-6s %s\n", static_cast<int>(k.size()), k.data(), gguf::value_type_name(f.type_of(k)),
                f.value_to_string(k).c_str());
  }
  if (no_tensors) return 0;
  size_t bytes = 0;
  for (const auto& t : f.tensors()) {
    std::string shape;
    for (uint64_t d : t.shape) shape += (shape.empty() ? "" : " x ") + std::to_string(d);
    std::printf("  %-36s %-6s %-20s offset %-12llu %zu bytes\n", t.name.c_str(), gguf::ggml_type_name(t.type),
                shape.c_str(), static_cast<unsigned long long>(t.offset), t.bytes);
    bytes += t.bytes;
  }
  std::printf("tensor data: %.2f MB\n", static_cast<double>(bytes) / 1e6);
  return 0;
}

}  // namespace qmm::cli
