#include "measure/io_dump.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "measure/workload_data.h"

namespace autotune::measure {

static_assert(std::endian::native == std::endian::little, ".npy files are written as '<f4' from host memory");

namespace {

constexpr char kMagic[] = "\x93NUMPY";  // 6 bytes, then the version
constexpr size_t kMagicBytes = 6;

std::string ShapeTuple(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

// "(3, 4)" or "(5,)" or "()": the integers in order.
Result<std::vector<int64_t>> ParseShapeTuple(const std::string& text) {
  std::vector<int64_t> shape;
  size_t i = 0;
  while (i < text.size()) {
    if (std::isdigit(static_cast<unsigned char>(text[i]))) {
      size_t end = i;
      while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
      shape.push_back(std::stoll(text.substr(i, end - i)));
      i = end;
    } else if (text[i] == '(' || text[i] == ')' || text[i] == ',' || text[i] == ' ' || text[i] == 'L') {
      ++i;
    } else {
      return MakeError(fmt::format("malformed shape {}", text));
    }
  }
  return shape;
}

}  // namespace

std::string SavedInputFile(size_t i) { return fmt::format("input{}.npy", i); }

Result<void> WriteNpy(const std::string& path, const float* data, int64_t n, const std::vector<int64_t>& shape_in) {
  const std::vector<int64_t> shape = shape_in.empty() ? std::vector<int64_t>{n} : shape_in;
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  if (count != n) return MakeError(fmt::format("{}: shape {} does not hold {} elements", path, ShapeTuple(shape), n));
  std::string header =
      fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': {}, }}", ShapeTuple(shape));
  // Magic, version, 2-byte length, header: padded with spaces so the data starts 64-byte aligned.
  const size_t fixed = kMagicBytes + 2 + 2;
  const size_t total = (fixed + header.size() + 1 + 63) / 64 * 64;
  header.append(total - fixed - header.size() - 1, ' ');
  header.push_back('\n');
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return MakeError(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
  const auto len = static_cast<uint16_t>(header.size());
  const char prefix[] = {1, 0, static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  f.write(kMagic, kMagicBytes);
  f.write(prefix, sizeof prefix);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(n * sizeof(float)));
  f.close();
  if (!f) return MakeError(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
  return {};
}

Result<NpyArray> ReadNpy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return MakeError(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto bad = [&](const std::string& why) {
    return MakeError(fmt::format("'{}' is not a float32 .npy file: {}", path, why));
  };
  if (bytes.size() < kMagicBytes + 4 || bytes.compare(0, kMagicBytes, kMagic, kMagicBytes) != 0) return bad("no magic");
  const auto major = static_cast<unsigned char>(bytes[kMagicBytes]);
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return bad("truncated header");
    for (int i = 3; i >= 0; --i) header_len = (header_len << 8) | static_cast<unsigned char>(bytes[8 + i]);
    offset = 12;
  } else {
    return bad(fmt::format("version {}", major));
  }
  if (bytes.size() < offset + header_len) return bad("truncated header");
  const std::string header = bytes.substr(offset, header_len);
  if (header.find("'descr': '<f4'") == std::string::npos) return bad("not little-endian float32 ('<f4')");
  if (header.find("'fortran_order': False") == std::string::npos) return bad("not C order");
  const size_t s = header.find("'shape':");
  const size_t open = s == std::string::npos ? s : header.find('(', s);
  const size_t close = open == std::string::npos ? open : header.find(')', open);
  if (close == std::string::npos) return bad("no shape");
  auto shape = ParseShapeTuple(header.substr(open, close - open + 1));
  if (!shape) return bad(shape.error().message);
  int64_t n = 1;
  for (int64_t d : *shape) n *= d;
  const size_t data_at = offset + header_len;
  if (bytes.size() - data_at != static_cast<size_t>(n) * sizeof(float)) {
    return bad(fmt::format("{} data bytes for {} elements", bytes.size() - data_at, n));
  }
  NpyArray a;
  a.shape = std::move(*shape);
  a.data.resize(static_cast<size_t>(n));
  std::memcpy(a.data.data(), bytes.data() + data_at, a.data.size() * sizeof(float));
  return a;
}

std::string SavedOutputFile(const tir::Workload& w, size_t i) {
  return i < w.side_outputs.size() ? "output_" + w.side_outputs[i].name + ".npy" : kSavedOutputFile;
}

Result<void> WriteSavedOutputs(const std::vector<MeasureConfig::SavedOutput>& files, const float* values) {
  for (const auto& f : files) {
    int64_t n = 1;
    for (int64_t d : f.shape) n *= d;
    AT_TRY_VOID(WriteNpy(f.path, values, n, f.shape));
    values += n;
  }
  return {};
}

Result<void> SaveInputs(const tir::Workload& w, uint64_t seed, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return MakeError(fmt::format("cannot create the directory '{}': {}", dir, ec.message()));
  std::vector<int64_t> counts;
  for (const auto& in : w.inputs) counts.push_back(in.NumElements());
  std::vector<AlignedFloats> inputs = MakeRandomInputs(counts, seed);
  for (size_t i = 0; i < inputs.size(); ++i) {
    RoundToType(inputs[i].data(), inputs[i].size(), w.inputs[i].dtype);  // what kernels read
    const std::string path = (std::filesystem::path(dir) / SavedInputFile(i)).string();
    AT_TRY_VOID(WriteNpy(path, inputs[i].data(), inputs[i].size(), w.inputs[i].shape));
  }
  return {};
}

nlohmann::json IoManifest(const tir::Workload& w, uint64_t seed, bool with_output) {
  nlohmann::json shape = nlohmann::json::object();
  for (const auto& [k, v] : w.shape) shape[k] = v;
  nlohmann::json tensors = nlohmann::json::array();
  for (size_t i = 0; i < w.inputs.size(); ++i) {
    tensors.push_back({{"file", SavedInputFile(i)}, {"role", "input"}, {"name", w.inputs[i].name},
                       {"shape", w.inputs[i].shape}, {"dtype", tir::DTypeName(w.inputs[i].dtype)}});
  }
  if (with_output) {
    const std::vector<tir::TensorSpec> outputs = w.Outputs();
    for (size_t i = 0; i < outputs.size(); ++i) {
      tensors.push_back({{"file", SavedOutputFile(w, i)}, {"role", "output"}, {"name", outputs[i].name},
                         {"shape", outputs[i].shape}, {"dtype", tir::DTypeName(outputs[i].dtype)}});
    }
  }
  return {{"format", "autotune-io-1"}, {"workload", w.CanonicalText()}, {"op", w.op},
          {"shape", shape},            {"shape_text", tir::ShapeText(w.shape)},
          {"epilogue", w.epilogue},    {"layout", w.layout},
          {"seed", seed},              {"dtype", tir::DTypeName(w.output.dtype)},           {"flops", w.flops},
          {"precision", tir::PrecisionName(w.precision)},  {"min_bytes", w.min_bytes},  {"tensors", tensors}};
}

}  // namespace autotune::measure
