#include "shardwise/runtime/npy.h"

#include <fstream>

#include <fmt/format.h>

namespace shardwise {

Status WriteNpy(const std::string& path, const std::vector<float>& data,
                const std::vector<int64_t>& shape) {
  // Python tuple syntax: "(2, 3)"; a single dimension needs its comma, "(2,)".
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) dims += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";
  std::string header =
      fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}), }}", dims);
  // magic (6) + version (2) + header length (2) + header + '\n' is padded to 64 bytes.
  const size_t unpadded = 10 + header.size() + 1;
  header += std::string((64 - unpadded % 64) % 64, ' ') + "\n";
  std::ofstream out(path, std::ios::binary);
  if (!out) return Error(fmt::format("{}: cannot write (check --dump-logits)", path));
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  out.write(reinterpret_cast<const char*>(&len), 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * 4));
  return out ? Status() : Error(fmt::format("{}: write failed", path));
}

}  // namespace shardwise
