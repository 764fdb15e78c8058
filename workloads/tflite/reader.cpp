// Safe TFLite flatbuffer reader: field access by vtable field id on flatbuffers::Table, every offset,
// vector and table checked with flatbuffers::Verifier before use, then semantic checks of the model.
// Field ids and enums: those of the TFLite flatbuffer schema ("TFL3").
// Entry points: read_model(), read_model_bytes() (declared in reader.hpp).

#include "workloads/tflite/reader.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <limits>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include <flatbuffers/flatbuffers.h>
#include <fmt/format.h>

#include "common/files.hpp"
#include "common/user_error.hpp"

namespace npumap::tflite {
namespace {

using common::SourceLocation;
using common::UserError;
using flatbuffers::soffset_t;
using flatbuffers::uoffset_t;
using flatbuffers::voffset_t;

static_assert(FLATBUFFERS_LITTLEENDIAN, "scalar vectors are copied with memcpy: the host must be little-endian");

// ---- Field ids (TFLITE_FORMAT.md, "Tables") ----
namespace model_f { constexpr int version = 0, operator_codes = 1, subgraphs = 2, description = 3, buffers = 4, metadata = 6; }
namespace subgraph_f { constexpr int tensors = 0, inputs = 1, outputs = 2, operators = 3, name = 4; }
namespace tensor_f {
constexpr int shape = 0, type = 1, buffer = 2, name = 3, quantization = 4, is_variable = 5, sparsity = 6,
              shape_signature = 7, has_rank = 8, external_buffer = 10;
}
namespace quant_f { constexpr int min = 0, max = 1, scale = 2, zero_point = 3, details_type = 4, quantized_dimension = 6; }
namespace buffer_f { constexpr int data = 0, offset = 1, size = 2; }
namespace operator_f {
constexpr int opcode_index = 0, inputs = 1, outputs = 2, builtin_options_type = 3, builtin_options = 4,
              custom_options = 5, intermediates = 8, large_custom_options_offset = 9,
              large_custom_options_size = 10, builtin_options_2_type = 11;
}
namespace opcode_f { constexpr int deprecated_builtin_code = 0, custom_code = 1, version = 2, builtin_code = 3; }
namespace metadata_f { constexpr int name = 0, buffer = 1; }

// ---- BuiltinOptions union members this reader parses ----
namespace opt {
constexpr std::uint8_t Conv2D = 1, DepthwiseConv2D = 2, Pool2D = 5, FullyConnected = 8, Softmax = 9,
                       Concatenation = 10, Add = 11, ResizeBilinear = 15, Reshape = 17, Mul = 21, Pad = 22,
                       Reducer = 27, Sub = 28, Squeeze = 30, StridedSlice = 32, Split = 35, PadV2 = 43,
                       TransposeConv = 49, ResizeNearestNeighbor = 74, LeakyRelu = 75, SplitV = 79;
constexpr std::uint8_t kMaxMember = 126;  // RightShiftOptions
}  // namespace opt

std::string_view options_name(std::uint8_t member) {
  switch (member) {
    case 0: return "NONE";
    case opt::Conv2D: return "Conv2DOptions";
    case opt::DepthwiseConv2D: return "DepthwiseConv2DOptions";
    case opt::Pool2D: return "Pool2DOptions";
    case opt::FullyConnected: return "FullyConnectedOptions";
    case opt::Softmax: return "SoftmaxOptions";
    case opt::Concatenation: return "ConcatenationOptions";
    case opt::Add: return "AddOptions";
    case opt::ResizeBilinear: return "ResizeBilinearOptions";
    case opt::Reshape: return "ReshapeOptions";
    case opt::Mul: return "MulOptions";
    case opt::Pad: return "PadOptions";
    case opt::Reducer: return "ReducerOptions";
    case opt::Sub: return "SubOptions";
    case opt::Squeeze: return "SqueezeOptions";
    case opt::StridedSlice: return "StridedSliceOptions";
    case opt::Split: return "SplitOptions";
    case opt::PadV2: return "PadV2Options";
    case opt::TransposeConv: return "TransposeConvOptions";
    case opt::ResizeNearestNeighbor: return "ResizeNearestNeighborOptions";
    case opt::LeakyRelu: return "LeakyReluOptions";
    case opt::SplitV: return "SplitVOptions";
    default: return "another options table";
  }
}

constexpr voffset_t slot(int id) { return static_cast<voffset_t>(4 + 2 * id); }

/// A key path built on the stack ("subgraphs[0].operators[12].inputs[1]"), rendered only on error.
struct Path {
  const Path* parent = nullptr;
  std::string_view name;
  std::int64_t index = -1;
};

void render(const Path* p, std::string& out) {
  if (p == nullptr) return;
  render(p->parent, out);
  if (!p->name.empty()) {
    if (!out.empty()) out += '.';
    out += p->name;
  }
  if (p->index >= 0) fmt::format_to(std::back_inserter(out), "[{}]", p->index);
}

std::string printable(const std::uint8_t* p, std::size_t n) {
  std::string out = "\"";
  for (std::size_t i = 0; i < n; ++i) {
    if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '"' && p[i] != '\\') {
      out += static_cast<char>(p[i]);
    } else {
      out += fmt::format("\\x{:02x}", p[i]);
    }
  }
  return out + "\"";
}

/// A name from the file, quoted for a one-line message: control bytes escaped, long names cut.
std::string shown(std::string_view name) {
  constexpr std::size_t kMax = 120;
  std::string out = "'";
  for (std::size_t i = 0; i < name.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (name.size() > kMax) out += "...";
  return out + "'";
}

std::string dims_text(const std::vector<std::int32_t>& dims) { return fmt::format("[{}]", fmt::join(dims, ", ")); }

/// A verified table; balances flatbuffers::Verifier's depth count when it goes out of scope.
class TableRef {
 public:
  TableRef() = default;
  TableRef(const flatbuffers::Table* table, const Path* path, flatbuffers::Verifier* verifier)
      : table_(table), path_(path), verifier_(verifier) {}
  TableRef(TableRef&& other) noexcept
      : table_(std::exchange(other.table_, nullptr)), path_(other.path_), verifier_(std::exchange(other.verifier_, nullptr)) {}
  TableRef(const TableRef&) = delete;
  TableRef& operator=(const TableRef&) = delete;
  TableRef& operator=(TableRef&&) = delete;
  ~TableRef() {
    if (verifier_ != nullptr) verifier_->EndTable();
  }

  explicit operator bool() const { return table_ != nullptr; }
  const flatbuffers::Table* get() const { return table_; }
  const Path* path() const { return path_; }

 private:
  const flatbuffers::Table* table_ = nullptr;
  const Path* path_ = nullptr;
  flatbuffers::Verifier* verifier_ = nullptr;
};

struct TableVector {
  const std::uint8_t* vec = nullptr;  // the vector's length field
  std::uint32_t size = 0;
};

flatbuffers::Verifier::Options verifier_options(const ReadLimits& limits) {
  flatbuffers::Verifier::Options o;
  o.max_depth = limits.max_depth;
  o.max_tables = limits.max_tables;
  o.check_alignment = true;
  o.check_nested_flatbuffers = false;
  return o;
}

class Reader {
 public:
  Reader(std::string file, const std::uint8_t* data, std::size_t size, const ReadLimits& limits)
      : file_(std::move(file)),
        data_(data),
        size_(size),
        // The flatbuffer itself is below 2 GiB; data after it (external buffers) is checked against size_.
        fb_size_(std::min<std::size_t>(size, FLATBUFFERS_MAX_BUFFER_SIZE - 1)),
        limits_(limits),
        verifier_(data, fb_size_, verifier_options(limits)),
        budget_(std::min(limits.expansion_factor * size, limits.max_copied_bytes) + (std::size_t{1} << 20)) {}

  Model read(std::shared_ptr<const std::string> bytes);

 private:
  [[noreturn]] void fail(const Path* at, std::string message, std::string hint = {}) const {
    std::string key;
    render(at, key);
    throw UserError(SourceLocation{file_, 0, 0}, std::move(key), std::move(message), std::move(hint));
  }

  std::size_t pos_of(const void* p) const {
    return static_cast<std::size_t>(static_cast<const std::uint8_t*>(p) - data_);
  }

  /// For messages only: a u16 at a position the verifier rejected (it may be misaligned).
  std::uint16_t unaligned_u16(std::size_t pos) const {
    std::uint16_t v = 0;
    if (pos < fb_size_ && fb_size_ - pos >= sizeof v) std::memcpy(&v, data_ + pos, sizeof v);
    return v;
  }

  void charge(std::size_t bytes, const Path* at) {
    if (bytes > budget_ - copied_) {
      fail(at, fmt::format("the model expands to more than {} bytes of tables, vectors and names", budget_),
           "shared or overlapping flatbuffer tables; a corrupt or hostile file");
    }
    copied_ += bytes;
  }

  // -- flatbuffer access, every step verified --

  /// The buffer position an offset stored at `field_pos` points to.
  std::size_t follow(std::size_t field_pos, const Path* at, std::string_view what) {
    const uoffset_t o = verifier_.VerifyOffset(field_pos);
    if (o != 0) return field_pos + o;
    if (field_pos > fb_size_ || fb_size_ - field_pos < sizeof(uoffset_t)) {
      fail(at, fmt::format("the offset to the {} at byte {} lies past the end of the file ({} bytes)", what,
                           field_pos, size_));
    }
    if (field_pos % sizeof(uoffset_t) != 0) {
      fail(at, fmt::format("the offset to the {} at byte {} is misaligned", what, field_pos));
    }
    const auto value = flatbuffers::ReadScalar<uoffset_t>(data_ + field_pos);
    fail(at, fmt::format("the offset {} to the {} at byte {} points outside the file ({} bytes)", value, what,
                         field_pos, size_));
  }

  TableRef open_table(std::size_t table_pos, const Path* at, std::string_view what) {
    if (++tables_ > limits_.max_tables) {
      fail(at, fmt::format("more than {} tables", limits_.max_tables), "a corrupt or hostile file");
    }
    if (!verifier_.VerifyTableStart(data_ + table_pos)) {
      if (fb_size_ - table_pos < sizeof(soffset_t) || table_pos % sizeof(soffset_t) != 0) {
        fail(at, fmt::format("the {} table at byte {} is misaligned or runs past the end of the file", what, table_pos));
      }
      const auto vt = static_cast<std::int64_t>(table_pos) -
                      static_cast<std::int64_t>(flatbuffers::ReadScalar<soffset_t>(data_ + table_pos));
      if (vt < 0 || static_cast<std::uint64_t>(vt) + 4 > fb_size_) {
        fail(at, fmt::format("the vtable of the {} table at byte {} lies outside the file (at byte {}, file {} bytes)",
                             what, table_pos, vt, size_));
      }
      fail(at, fmt::format("the {} table at byte {} has a bad vtable at byte {} (size {}), or the tables nest "
                           "deeper than {}",
                           what, table_pos, vt, unaligned_u16(static_cast<std::size_t>(vt)), limits_.max_depth));
    }
    return TableRef(reinterpret_cast<const flatbuffers::Table*>(data_ + table_pos), at, &verifier_);
  }

  static voffset_t field_offset(const TableRef& t, int id) {
    return t ? t.get()->GetOptionalFieldOffset(slot(id)) : voffset_t{0};
  }

  template <class T>
  T scalar(const TableRef& t, int id, T fallback, std::string_view name) {
    if (!t) return fallback;
    if (!t.get()->VerifyField<T>(verifier_, slot(id), sizeof(T))) {
      const Path at{t.path(), name};
      fail(&at, fmt::format("the field at byte {} is misaligned or runs past the end of the file ({} bytes)",
                            pos_of(t.get()) + field_offset(t, id), size_));
    }
    return t.get()->GetField<T>(slot(id), fallback);
  }

  bool boolean(const TableRef& t, int id, bool fallback, std::string_view name) {
    return scalar<std::uint8_t>(t, id, fallback ? 1 : 0, name) != 0;
  }

  /// The vector in field `id` (pointer to its length field) or nullptr when absent; `*length` gets its length.
  const std::uint8_t* vector_field(const TableRef& t, int id, std::size_t elem_size, const Path* at,
                                   std::uint32_t* length, std::uint32_t max_length) {
    *length = 0;
    const voffset_t fo = field_offset(t, id);
    if (fo == 0) return nullptr;
    const std::size_t vpos = follow(pos_of(t.get()) + fo, at, "vector");
    if (!verifier_.VerifyVectorOrString(data_ + vpos, elem_size)) {
      if (vpos % sizeof(uoffset_t) != 0 || fb_size_ - vpos < sizeof(uoffset_t)) {
        fail(at, fmt::format("the vector at byte {} is misaligned or runs past the end of the file", vpos));
      }
      const auto n = flatbuffers::ReadScalar<uoffset_t>(data_ + vpos);
      fail(at, fmt::format("vector length {} ({} bytes from byte {}) runs past the end of the file ({} bytes)", n,
                           std::uint64_t{n} * elem_size, vpos + 4, size_));
    }
    *length = flatbuffers::ReadScalar<uoffset_t>(data_ + vpos);
    if (*length > max_length) {
      fail(at, fmt::format("vector length {} exceeds the limit of {}", *length, max_length));
    }
    return data_ + vpos;
  }

  template <class T>
  std::vector<T> scalars(const TableRef& t, int id, const Path* at, std::uint32_t max_length = 0) {
    std::uint32_t n = 0;
    const std::uint8_t* v =
        vector_field(t, id, sizeof(T), at, &n, max_length != 0 ? max_length : limits_.max_vector_length);
    std::vector<T> out;
    if (v == nullptr || n == 0) return out;
    charge(std::size_t{n} * sizeof(T), at);
    out.resize(n);
    std::memcpy(out.data(), v + sizeof(uoffset_t), std::size_t{n} * sizeof(T));
    return out;
  }

  std::span<const std::uint8_t> bytes_field(const TableRef& t, int id, const Path* at) {
    std::uint32_t n = 0;
    // Byte blobs (weights, custom options) are bounded only by the file: they are not copied.
    const std::uint8_t* v = vector_field(t, id, 1, at, &n, std::numeric_limits<std::uint32_t>::max());
    if (v == nullptr) return {};
    return {v + sizeof(uoffset_t), n};
  }

  std::string string_field(const TableRef& t, int id, std::string_view name) {
    const voffset_t fo = field_offset(t, id);
    if (fo == 0) return {};
    const Path at{t.path(), name};
    const std::size_t spos = follow(pos_of(t.get()) + fo, &at, "string");
    const auto* s = reinterpret_cast<const flatbuffers::String*>(data_ + spos);
    if (!verifier_.VerifyString(s)) {
      fail(&at, fmt::format("the string at byte {} runs past the end of the file or lacks its terminating zero", spos));
    }
    if (s->size() > limits_.max_vector_length) {
      fail(&at, fmt::format("string length {} exceeds the limit of {}", s->size(), limits_.max_vector_length));
    }
    charge(s->size(), &at);
    return std::string(s->c_str(), s->size());
  }

  TableVector table_vector(const TableRef& t, int id, const Path* at, std::size_t bytes_per_element) {
    TableVector out;
    out.vec = vector_field(t, id, sizeof(uoffset_t), at, &out.size, limits_.max_vector_length);
    charge(std::size_t{out.size} * bytes_per_element, at);
    return out;
  }

  TableRef element(const TableVector& v, std::uint32_t i, const Path* at, std::string_view what) {
    const std::size_t epos = pos_of(v.vec) + sizeof(uoffset_t) + std::size_t{i} * sizeof(uoffset_t);
    return open_table(follow(epos, at, what), at, what);
  }

  TableRef sub_table(const TableRef& t, int id, const Path* at, std::string_view what) {
    const voffset_t fo = field_offset(t, id);
    if (fo == 0) return {};
    return open_table(follow(pos_of(t.get()) + fo, at, what), at, what);
  }

  /// Checks that the byte range [offset, offset + size) of an out-of-flatbuffer blob lies in the file.
  std::span<const std::uint8_t> file_range(std::uint64_t offset, std::uint64_t size, const Path* at,
                                           std::string_view what) const {
    if (offset > size_ || size > size_ - offset) {
      fail(at, fmt::format("{} at offset {} with size {} lies outside the file ({} bytes)", what, offset, size, size_));
    }
    return {data_ + offset, static_cast<std::size_t>(size)};
  }

  // -- the tables of the schema --

  Buffer read_buffer(const TableRef& t, const Path* at);
  OperatorCode read_operator_code(const TableRef& t, const Path* at);
  Subgraph read_subgraph(const TableRef& t, const Path* at, const Model& m);
  Tensor read_tensor(const TableRef& t, const Path* at, const Model& m);
  void read_quantization(const TableRef& t, const Path* at, Tensor& tensor);
  Operator read_operator(const TableRef& t, const Path* at, const Model& m, std::size_t tensor_count);
  BuiltinOptions read_options(const TableRef& op, const Path* at, BuiltinOperator code, std::uint8_t type);
  TableRef options_table(const TableRef& op, const Path* at, BuiltinOperator code, std::uint8_t type,
                         std::uint8_t expected, bool required);
  Padding padding(const TableRef& t, int id);
  Activation activation(const TableRef& t, int id);
  std::int32_t at_least_one(const TableRef& t, int id, std::int32_t fallback, std::string_view name);
  void check_constant(const Tensor& tensor, const Path* at, const Model& m) const;
  void check_zero_points(const Tensor& tensor, const Path* at) const;
  float finite(const TableRef& t, int id, std::string_view name);
  void check_operator_outputs(const Subgraph& sg, const Path* at) const;
  void check_indices(const std::vector<std::int32_t>& v, std::string_view field, const Path* at,
                     std::size_t tensor_count, bool allow_absent) const;
  void check_zero_sized(const Subgraph& sg, const Path* at) const;
  void check_graph(const Subgraph& sg, const Path* at) const;

  std::string file_;
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t fb_size_;
  ReadLimits limits_;
  flatbuffers::Verifier verifier_;
  std::size_t budget_;
  std::size_t copied_ = 0;
  std::uint32_t tables_ = 0;
};

Model Reader::read(std::shared_ptr<const std::string> bytes) {
  if (size_ == 0) fail(nullptr, "the file is empty", "expected a TensorFlow Lite .tflite flatbuffer");
  if (size_ < 8) fail(nullptr, fmt::format("the file is too short for a TFLite flatbuffer ({} bytes)", size_));
  if (!flatbuffers::BufferHasIdentifier(data_, "TFL3")) {
    fail(nullptr, fmt::format("not a TFLite model: file identifier (bytes 4..7) is {}, expected \"TFL3\"",
                              printable(data_ + 4, 4)));
  }

  Model m;
  m.name = file_;
  m.bytes = std::move(bytes);
  const TableRef root = open_table(follow(0, nullptr, "root Model table"), nullptr, "Model");

  m.version = scalar<std::uint32_t>(root, model_f::version, 0, "version");
  if (m.version != 3) {
    const Path at{nullptr, "version"};
    fail(&at, fmt::format("unsupported schema version {} (this reader reads version 3)", m.version));
  }
  m.description = string_field(root, model_f::description, "description");

  {  // Buffers first: tensors are checked against them.
    const Path at{nullptr, "buffers"};
    const TableVector v = table_vector(root, model_f::buffers, &at, sizeof(Buffer));
    m.buffers.reserve(v.size);
    for (std::uint32_t i = 0; i < v.size; ++i) {
      const Path p{nullptr, "buffers", i};
      m.buffers.push_back(read_buffer(element(v, i, &p, "Buffer"), &p));
    }
  }
  {
    const Path at{nullptr, "operator_codes"};
    const TableVector v = table_vector(root, model_f::operator_codes, &at, sizeof(OperatorCode));
    m.operator_codes.reserve(v.size);
    for (std::uint32_t i = 0; i < v.size; ++i) {
      const Path p{nullptr, "operator_codes", i};
      m.operator_codes.push_back(read_operator_code(element(v, i, &p, "OperatorCode"), &p));
    }
  }
  {
    const Path at{nullptr, "metadata"};
    const TableVector v = table_vector(root, model_f::metadata, &at, sizeof(Metadata));
    for (std::uint32_t i = 0; i < v.size; ++i) {
      const Path p{nullptr, "metadata", i};
      const TableRef t = element(v, i, &p, "Metadata");
      Metadata md{string_field(t, metadata_f::name, "name"), scalar<std::uint32_t>(t, metadata_f::buffer, 0, "buffer")};
      if (md.buffer >= m.buffers.size()) {
        const Path b{&p, "buffer"};
        fail(&b, fmt::format("buffer index {} out of range (the model has {} buffers)", md.buffer, m.buffers.size()));
      }
      m.metadata.push_back(std::move(md));
    }
  }
  {
    const Path at{nullptr, "subgraphs"};
    const TableVector v = table_vector(root, model_f::subgraphs, &at, sizeof(Subgraph));
    if (v.size == 0) fail(&at, "the model has no subgraphs");
    m.subgraphs.reserve(v.size);
    for (std::uint32_t i = 0; i < v.size; ++i) {
      const Path p{nullptr, "subgraphs", i};
      m.subgraphs.push_back(read_subgraph(element(v, i, &p, "SubGraph"), &p, m));
    }
  }
  return m;
}

Buffer Reader::read_buffer(const TableRef& t, const Path* at) {
  Buffer b;
  const Path data_path{at, "data"};
  b.data = bytes_field(t, buffer_f::data, &data_path);
  b.offset = scalar<std::uint64_t>(t, buffer_f::offset, 0, "offset");
  b.size = scalar<std::uint64_t>(t, buffer_f::size, 0, "size");
  if (b.external()) {
    if (!b.data.empty()) fail(at, "has both inline data and an external offset");
    b.data = file_range(b.offset, b.size, at, "external buffer data");
  }
  return b;
}

OperatorCode Reader::read_operator_code(const TableRef& t, const Path* at) {
  OperatorCode oc;
  const auto deprecated = scalar<std::int8_t>(t, opcode_f::deprecated_builtin_code, 0, "deprecated_builtin_code");
  const auto builtin = scalar<std::int32_t>(t, opcode_f::builtin_code, 0, "builtin_code");
  oc.custom_code = string_field(t, opcode_f::custom_code, "custom_code");
  oc.version = scalar<std::int32_t>(t, opcode_f::version, 1, "version");
  const std::int32_t code = std::max<std::int32_t>(deprecated, builtin);
  if (code < 0 || code > kMaxBuiltinOperator) {
    fail(at, fmt::format("unknown builtin operator code {} (this reader knows 0..{})", code, kMaxBuiltinOperator),
         "a model from a newer TFLite schema, or a corrupt file");
  }
  oc.builtin_code = static_cast<BuiltinOperator>(code);
  if (oc.builtin_code == BuiltinOperator::PLACEHOLDER_FOR_GREATER_OP_CODES) {
    fail(at, "builtin operator code 127 (PLACEHOLDER_FOR_GREATER_OP_CODES) is not an operator",
         "builtin_code should hold the real code");
  }
  if (oc.builtin_code == BuiltinOperator::CUSTOM && oc.custom_code.empty()) {
    fail(at, "a CUSTOM operator code without custom_code");
  }
  return oc;
}

Subgraph Reader::read_subgraph(const TableRef& t, const Path* at, const Model& m) {
  Subgraph sg;
  sg.name = string_field(t, subgraph_f::name, "name");
  {
    const Path vp{at, "tensors"};
    const TableVector v = table_vector(t, subgraph_f::tensors, &vp, sizeof(Tensor));
    sg.tensors.reserve(v.size);
    for (std::uint32_t i = 0; i < v.size; ++i) {
      const Path p{at, "tensors", i};
      sg.tensors.push_back(read_tensor(element(v, i, &p, "Tensor"), &p, m));
    }
  }
  const Path in_path{at, "inputs"};
  sg.inputs = scalars<std::int32_t>(t, subgraph_f::inputs, &in_path);
  check_indices(sg.inputs, "inputs", at, sg.tensors.size(), false);
  const Path out_path{at, "outputs"};
  sg.outputs = scalars<std::int32_t>(t, subgraph_f::outputs, &out_path);
  check_indices(sg.outputs, "outputs", at, sg.tensors.size(), false);
  {
    const Path vp{at, "operators"};
    const TableVector v = table_vector(t, subgraph_f::operators, &vp, sizeof(Operator));
    sg.operators.reserve(v.size);
    for (std::uint32_t i = 0; i < v.size; ++i) {
      const Path p{at, "operators", i};
      sg.operators.push_back(read_operator(element(v, i, &p, "Operator"), &p, m, sg.tensors.size()));
    }
  }
  check_zero_sized(sg, at);
  check_operator_outputs(sg, at);
  check_graph(sg, at);
  return sg;
}

Tensor Reader::read_tensor(const TableRef& t, const Path* at, const Model& m) {
  Tensor out;
  out.name = string_field(t, tensor_f::name, "name");

  const Path shape_path{at, "shape"};
  out.shape = scalars<std::int32_t>(t, tensor_f::shape, &shape_path, limits_.max_rank);
  std::int64_t count = 1;
  for (std::size_t i = 0; i < out.shape.size(); ++i) {
    const std::int32_t d = out.shape[i];
    if (d < 0) {  // 0 is checked in read_subgraph: it is allowed for operator intermediates only
      const Path p{at, "shape", static_cast<std::int64_t>(i)};
      fail(&p, fmt::format("dimension {} of tensor {} is not positive (shape {})", d, shown(out.name), dims_text(out.shape)));
    }
    if (d != 0 && count > limits_.max_elements / d) {
      fail(&shape_path, fmt::format("tensor {} of shape {} has more than {} elements", shown(out.name),
                                    dims_text(out.shape), limits_.max_elements));
    }
    count *= d;
  }

  const Path sig_path{at, "shape_signature"};
  out.shape_signature = scalars<std::int32_t>(t, tensor_f::shape_signature, &sig_path, limits_.max_rank);
  if (!out.shape_signature.empty()) {
    if (out.shape_signature.size() != out.shape.size()) {
      fail(&sig_path, fmt::format("shape_signature {} has rank {} but shape {} has rank {}", dims_text(out.shape_signature),
                                  out.shape_signature.size(), dims_text(out.shape), out.shape.size()));
    }
    for (std::size_t i = 0; i < out.shape.size(); ++i) {
      const std::int32_t s = out.shape_signature[i];
      if (s != -1 && s != out.shape[i]) {
        const Path p{at, "shape_signature", static_cast<std::int64_t>(i)};
        fail(&p, fmt::format("{} is neither -1 (dynamic) nor the shape's {}", s, out.shape[i]));
      }
    }
  }

  const auto type = scalar<std::int8_t>(t, tensor_f::type, 0, "type");
  if (type < 0 || type > kMaxTensorType) {
    const Path p{at, "type"};
    fail(&p, fmt::format("unknown tensor type {} (this reader knows 0..{})", type, kMaxTensorType));
  }
  out.type = static_cast<TensorType>(type);

  out.buffer = scalar<std::uint32_t>(t, tensor_f::buffer, 0, "buffer");
  if (out.buffer != 0 && out.buffer >= m.buffers.size()) {
    const Path p{at, "buffer"};
    fail(&p, fmt::format("buffer index {} out of range (the model has {} buffers)", out.buffer, m.buffers.size()));
  }
  out.is_variable = boolean(t, tensor_f::is_variable, false, "is_variable");
  out.has_rank = boolean(t, tensor_f::has_rank, false, "has_rank");
  if (const voffset_t fo = field_offset(t, tensor_f::sparsity); fo != 0) {
    const Path p{at, "sparsity"};
    follow(pos_of(t.get()) + fo, &p, "SparsityParameters table");
    out.is_sparse = true;
  }
  if (const auto ext = scalar<std::uint32_t>(t, tensor_f::external_buffer, 0, "external_buffer"); ext != 0) {
    const Path p{at, "external_buffer"};
    fail(&p, fmt::format("tensor {} refers to external_buffer {}; ExternalBuffer tables are not supported", shown(out.name), ext),
         "store the data in Model.buffers");
  }
  {
    const Path qp{at, "quantization"};
    const TableRef q = sub_table(t, tensor_f::quantization, &qp, "QuantizationParameters");
    if (q) read_quantization(q, &qp, out);
  }
  check_constant(out, at, m);
  return out;
}

void Reader::read_quantization(const TableRef& t, const Path* at, Tensor& tensor) {
  Quantization& q = tensor.quantization;
  const Path scale_path{at, "scale"}, zp_path{at, "zero_point"}, min_path{at, "min"}, max_path{at, "max"};
  q.scale = scalars<float>(t, quant_f::scale, &scale_path);
  q.zero_point = scalars<std::int64_t>(t, quant_f::zero_point, &zp_path);
  q.min = scalars<float>(t, quant_f::min, &min_path);
  q.max = scalars<float>(t, quant_f::max, &max_path);
  q.details_type = scalar<std::uint8_t>(t, quant_f::details_type, 0, "details_type");
  q.quantized_dimension = scalar<std::int32_t>(t, quant_f::quantized_dimension, 0, "quantized_dimension");
  if (!q.zero_point.empty() && q.zero_point.size() != q.scale.size()) {
    fail(at, fmt::format("{} scales but {} zero points", q.scale.size(), q.zero_point.size()));
  }
  check_zero_points(tensor, &zp_path);
  if (q.per_channel()) {
    const std::int32_t qd = q.quantized_dimension;
    const Path qd_path{at, "quantized_dimension"};
    // Old converters leave the filter's quantized_dimension (3) on rank-1 per-channel biases.
    const bool bias_quirk = tensor.shape.size() == 1 && static_cast<std::size_t>(tensor.shape[0]) == q.scale.size();
    if (qd < 0 || (static_cast<std::size_t>(qd) >= tensor.shape.size() && !bias_quirk)) {
      fail(&qd_path, fmt::format("quantized_dimension {} is outside the shape {} of tensor {}", qd,
                                 dims_text(tensor.shape), shown(tensor.name)));
    }
    if (!bias_quirk && static_cast<std::size_t>(tensor.shape[static_cast<std::size_t>(qd)]) != q.scale.size()) {
      fail(&scale_path, fmt::format("{} per-channel scales, but dimension {} of tensor {} {} has {} channels",
                                    q.scale.size(), qd, shown(tensor.name), dims_text(tensor.shape),
                                    tensor.shape[static_cast<std::size_t>(qd)]));
    }
  }
}

void Reader::check_zero_points(const Tensor& tensor, const Path* at) const {
  // The range of the stored integers (TFLite's own kernels refuse zero points outside it); other
  // types (int32 biases, floats) must still fit 32 bits.
  std::int64_t lo = std::numeric_limits<std::int32_t>::min(), hi = std::numeric_limits<std::int32_t>::max();
  switch (tensor.type) {
    case TensorType::INT8: lo = -128, hi = 127; break;
    case TensorType::UINT8: lo = 0, hi = 255; break;
    case TensorType::INT16: lo = -32768, hi = 32767; break;
    case TensorType::UINT16: lo = 0, hi = 65535; break;
    case TensorType::INT4: lo = -8, hi = 7; break;
    case TensorType::UINT4: lo = 0, hi = 15; break;
    default: break;
  }
  const auto& zp = tensor.quantization.zero_point;
  for (std::size_t i = 0; i < zp.size(); ++i) {
    if (zp[i] < lo || zp[i] > hi) {
      const Path p{at, "", static_cast<std::int64_t>(i)};
      fail(&p, fmt::format("zero point {} of {} tensor {} is outside [{}, {}]", zp[i], tensor_type_name(tensor.type),
                           shown(tensor.name), lo, hi),
           "a corrupt model");
    }
  }
}

float Reader::finite(const TableRef& t, int id, std::string_view name) {
  const auto v = scalar<float>(t, id, 0.0f, name);
  if (!std::isfinite(v)) {
    const Path p{t.path(), name};
    fail(&p, fmt::format("{} is {}; it must be a finite number", name, v), "a corrupt model");
  }
  return v;
}

void Reader::check_constant(const Tensor& tensor, const Path* at, const Model& m) const {
  if (tensor.buffer == 0 || tensor.is_sparse) return;
  const std::size_t have = m.buffers[tensor.buffer].data.size();
  const int bits = tensor_type_bits(tensor.type);
  if (have == 0 || bits == 0) return;  // an activation, or a type without a fixed element size
  const auto count = static_cast<std::uint64_t>(tensor.element_count());
  const std::uint64_t packed = (count * static_cast<std::uint64_t>(bits) + 7) / 8;
  if (have == packed || (bits < 8 && have == count)) return;  // sub-byte types: packed or one per byte
  const Path p{at, "buffer"};
  fail(&p, fmt::format("{} tensor {} of shape {} needs {} bytes but buffers[{}] holds {} bytes",
                       tensor_type_name(tensor.type), shown(tensor.name), dims_text(tensor.shape), packed, tensor.buffer, have));
}

void Reader::check_indices(const std::vector<std::int32_t>& v, std::string_view field, const Path* at,
                           std::size_t tensor_count, bool allow_absent) const {
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::int32_t x = v[i];
    if (x == -1 && allow_absent) continue;
    if (x < 0 || static_cast<std::size_t>(x) >= tensor_count) {
      const Path p{at, field, static_cast<std::int64_t>(i)};
      fail(&p, fmt::format("tensor index {} out of range (the subgraph has {} tensors)", x, tensor_count));
    }
  }
}

Operator Reader::read_operator(const TableRef& t, const Path* at, const Model& m, std::size_t tensor_count) {
  Operator op;
  op.opcode_index = scalar<std::uint32_t>(t, operator_f::opcode_index, 0, "opcode_index");
  if (op.opcode_index >= m.operator_codes.size()) {
    const Path p{at, "opcode_index"};
    fail(&p, fmt::format("operator code index {} out of range (the model has {} operator codes)", op.opcode_index,
                         m.operator_codes.size()));
  }
  op.code = m.operator_codes[op.opcode_index].builtin_code;

  const Path in_path{at, "inputs"}, out_path{at, "outputs"}, mid_path{at, "intermediates"};
  op.inputs = scalars<std::int32_t>(t, operator_f::inputs, &in_path);
  check_indices(op.inputs, "inputs", at, tensor_count, true);
  op.outputs = scalars<std::int32_t>(t, operator_f::outputs, &out_path);
  check_indices(op.outputs, "outputs", at, tensor_count, true);
  op.intermediates = scalars<std::int32_t>(t, operator_f::intermediates, &mid_path);
  check_indices(op.intermediates, "intermediates", at, tensor_count, true);

  const Path custom_path{at, "custom_options"};
  op.custom_options = bytes_field(t, operator_f::custom_options, &custom_path);
  const auto large_offset = scalar<std::uint64_t>(t, operator_f::large_custom_options_offset, 0, "large_custom_options_offset");
  const auto large_size = scalar<std::uint64_t>(t, operator_f::large_custom_options_size, 0, "large_custom_options_size");
  if (large_offset > 1) {
    if (!op.custom_options.empty()) fail(at, "has both custom_options and large_custom_options_offset");
    op.custom_options = file_range(large_offset, large_size, at, "large custom options");
  }
  op.builtin_options_2_type = scalar<std::uint8_t>(t, operator_f::builtin_options_2_type, 0, "builtin_options_2_type");

  op.builtin_options_type = scalar<std::uint8_t>(t, operator_f::builtin_options_type, 0, "builtin_options_type");
  if (op.builtin_options_type > opt::kMaxMember) {
    const Path p{at, "builtin_options_type"};
    fail(&p, fmt::format("unknown builtin options type {} (the union has members 0..{})", op.builtin_options_type,
                         opt::kMaxMember));
  }
  op.options = read_options(t, at, op.code, op.builtin_options_type);
  return op;
}

TableRef Reader::options_table(const TableRef& op, const Path* at, BuiltinOperator code, std::uint8_t type,
                               std::uint8_t expected, bool required) {
  if (type != expected && type != 0) {
    const Path p{at, "builtin_options_type"};
    fail(&p, fmt::format("builtin options type {} ({}) does not fit a {} operator (expects {} = {})", type,
                         options_name(type), operator_name(code), options_name(expected), expected));
  }
  if (required && (type != expected || field_offset(op, operator_f::builtin_options) == 0)) {
    fail(at, fmt::format("a {} operator without {}", operator_name(code), options_name(expected)));
  }
  if (type != expected) return {};
  return sub_table(op, operator_f::builtin_options, at, options_name(expected));
}

Padding Reader::padding(const TableRef& t, int id) {
  const auto v = scalar<std::int8_t>(t, id, 0, "padding");
  if (v != 0 && v != 1) {
    const Path p{t.path(), "padding"};
    fail(&p, fmt::format("unknown padding {} (SAME = 0, VALID = 1)", v));
  }
  return static_cast<Padding>(v);
}

Activation Reader::activation(const TableRef& t, int id) {
  const auto v = scalar<std::int8_t>(t, id, 0, "fused_activation_function");
  if (v < 0 || v > 5) {
    const Path p{t.path(), "fused_activation_function"};
    fail(&p, fmt::format("unknown fused activation {} (NONE, RELU, RELU_N1_TO_1, RELU6, TANH, SIGN_BIT = 0..5)", v));
  }
  return static_cast<Activation>(v);
}

std::int32_t Reader::at_least_one(const TableRef& t, int id, std::int32_t fallback, std::string_view name) {
  const auto v = scalar<std::int32_t>(t, id, fallback, name);
  if (v < 1) {
    const Path p{t.path(), name};
    fail(&p, fmt::format("{} is {}; it must be at least 1", name, v));
  }
  return v;
}

BuiltinOptions Reader::read_options(const TableRef& op, const Path* at, BuiltinOperator code, std::uint8_t type) {
  using B = BuiltinOperator;
  const Path p{at, "builtin_options"};
  switch (code) {
    case B::CONV_2D: {
      const TableRef t = options_table(op, &p, code, type, opt::Conv2D, true);
      Conv2DOptions o;
      o.padding = padding(t, 0);
      o.stride_w = at_least_one(t, 1, 0, "stride_w");
      o.stride_h = at_least_one(t, 2, 0, "stride_h");
      o.activation = activation(t, 3);
      o.dilation_w = at_least_one(t, 4, 1, "dilation_w_factor");
      o.dilation_h = at_least_one(t, 5, 1, "dilation_h_factor");
      return o;
    }
    case B::DEPTHWISE_CONV_2D: {
      const TableRef t = options_table(op, &p, code, type, opt::DepthwiseConv2D, true);
      DepthwiseConv2DOptions o;
      o.padding = padding(t, 0);
      o.stride_w = at_least_one(t, 1, 0, "stride_w");
      o.stride_h = at_least_one(t, 2, 0, "stride_h");
      o.depth_multiplier = scalar<std::int32_t>(t, 3, 0, "depth_multiplier");
      o.activation = activation(t, 4);
      o.dilation_w = at_least_one(t, 5, 1, "dilation_w_factor");
      o.dilation_h = at_least_one(t, 6, 1, "dilation_h_factor");
      return o;
    }
    case B::AVERAGE_POOL_2D:
    case B::MAX_POOL_2D:
    case B::L2_POOL_2D: {
      const TableRef t = options_table(op, &p, code, type, opt::Pool2D, true);
      Pool2DOptions o;
      o.padding = padding(t, 0);
      o.stride_w = at_least_one(t, 1, 0, "stride_w");
      o.stride_h = at_least_one(t, 2, 0, "stride_h");
      o.filter_w = at_least_one(t, 3, 0, "filter_width");
      o.filter_h = at_least_one(t, 4, 0, "filter_height");
      o.activation = activation(t, 5);
      return o;
    }
    case B::FULLY_CONNECTED: {
      const TableRef t = options_table(op, &p, code, type, opt::FullyConnected, false);
      FullyConnectedOptions o;
      o.activation = activation(t, 0);
      const auto wf = scalar<std::int8_t>(t, 1, 0, "weights_format");
      if (wf != 0 && wf != 1) {
        const Path wp{&p, "weights_format"};
        fail(&wp, fmt::format("unknown weights format {} (DEFAULT = 0, SHUFFLED4x16INT8 = 1)", wf));
      }
      o.weights_format = static_cast<WeightsFormat>(wf);
      o.keep_num_dims = boolean(t, 2, false, "keep_num_dims");
      o.asymmetric_quantize_inputs = boolean(t, 3, false, "asymmetric_quantize_inputs");
      return o;
    }
    case B::ADD:
    case B::SUB:
    case B::MUL: {
      const std::uint8_t expected = code == B::ADD ? opt::Add : code == B::SUB ? opt::Sub : opt::Mul;
      const TableRef t = options_table(op, &p, code, type, expected, false);
      ElementwiseOptions o;
      o.activation = activation(t, 0);
      if (code != B::MUL) o.pot_scale_int16 = boolean(t, 1, true, "pot_scale_int16");
      return o;
    }
    case B::CONCATENATION: {
      const TableRef t = options_table(op, &p, code, type, opt::Concatenation, false);
      ConcatenationOptions o;
      o.axis = scalar<std::int32_t>(t, 0, 0, "axis");
      o.activation = activation(t, 1);
      return o;
    }
    case B::RESHAPE: {
      const TableRef t = options_table(op, &p, code, type, opt::Reshape, false);
      ReshapeOptions o;
      if (field_offset(t, 0) != 0) {
        const Path np{&p, "new_shape"};
        o.new_shape = scalars<std::int32_t>(t, 0, &np, limits_.max_rank);
      }
      return o;
    }
    case B::SOFTMAX: {
      const TableRef t = options_table(op, &p, code, type, opt::Softmax, false);
      return SoftmaxOptions{finite(t, 0, "beta")};
    }
    case B::PAD:
    case B::PADV2: {
      (void)options_table(op, &p, code, type, code == B::PAD ? opt::Pad : opt::PadV2, false);
      return PadOptions{};
    }
    case B::STRIDED_SLICE: {
      const TableRef t = options_table(op, &p, code, type, opt::StridedSlice, false);
      StridedSliceOptions o;
      o.begin_mask = scalar<std::int32_t>(t, 0, 0, "begin_mask");
      o.end_mask = scalar<std::int32_t>(t, 1, 0, "end_mask");
      o.ellipsis_mask = scalar<std::int32_t>(t, 2, 0, "ellipsis_mask");
      o.new_axis_mask = scalar<std::int32_t>(t, 3, 0, "new_axis_mask");
      o.shrink_axis_mask = scalar<std::int32_t>(t, 4, 0, "shrink_axis_mask");
      o.offset = boolean(t, 5, false, "offset");
      return o;
    }
    case B::MEAN:
    case B::SUM:
    case B::REDUCE_MAX:
    case B::REDUCE_MIN:
    case B::REDUCE_PROD:
    case B::REDUCE_ANY:
    case B::REDUCE_ALL: {
      const TableRef t = options_table(op, &p, code, type, opt::Reducer, false);
      return ReducerOptions{boolean(t, 0, false, "keep_dims")};
    }
    case B::RESIZE_BILINEAR: {
      const TableRef t = options_table(op, &p, code, type, opt::ResizeBilinear, false);
      return ResizeOptions{boolean(t, 2, false, "align_corners"), boolean(t, 3, false, "half_pixel_centers")};
    }
    case B::RESIZE_NEAREST_NEIGHBOR: {
      const TableRef t = options_table(op, &p, code, type, opt::ResizeNearestNeighbor, false);
      return ResizeOptions{boolean(t, 0, false, "align_corners"), boolean(t, 1, false, "half_pixel_centers")};
    }
    case B::SPLIT:
    case B::SPLIT_V: {
      const TableRef t = options_table(op, &p, code, type, code == B::SPLIT ? opt::Split : opt::SplitV, false);
      return SplitOptions{scalar<std::int32_t>(t, 0, 0, "num_splits")};
    }
    case B::LEAKY_RELU: {
      const TableRef t = options_table(op, &p, code, type, opt::LeakyRelu, false);
      return LeakyReluOptions{finite(t, 0, "alpha")};
    }
    case B::TRANSPOSE_CONV: {
      const TableRef t = options_table(op, &p, code, type, opt::TransposeConv, true);
      TransposeConvOptions o;
      o.padding = padding(t, 0);
      o.stride_w = at_least_one(t, 1, 0, "stride_w");
      o.stride_h = at_least_one(t, 2, 0, "stride_h");
      o.activation = activation(t, 3);
      return o;
    }
    case B::SQUEEZE: {
      const TableRef t = options_table(op, &p, code, type, opt::Squeeze, false);
      const Path sp{&p, "squeeze_dims"};
      return SqueezeOptions{scalars<std::int32_t>(t, 0, &sp, limits_.max_rank)};
    }
    default:
      return UnparsedOptions{type};
  }
}

void Reader::check_zero_sized(const Subgraph& sg, const Path* at) const {
  // Zero-size tensors occur as LSTM intermediates (they carry only quantization); data tensors
  // must have positive dimensions.
  std::vector<char> holds_data(sg.tensors.size(), 0);
  const auto mark = [&](const std::vector<std::int32_t>& ids) {
    for (const std::int32_t t : ids) {
      if (t >= 0) holds_data[static_cast<std::size_t>(t)] = 1;
    }
  };
  mark(sg.inputs);
  mark(sg.outputs);
  for (const Operator& op : sg.operators) {
    mark(op.inputs);
    mark(op.outputs);
  }
  for (std::size_t i = 0; i < sg.tensors.size(); ++i) {
    const Tensor& t = sg.tensors[i];
    const auto zero = std::find(t.shape.begin(), t.shape.end(), 0);
    if (zero == t.shape.end() || !holds_data[i]) continue;
    const Path tp{at, "tensors", static_cast<std::int64_t>(i)};
    const Path p{&tp, "shape", zero - t.shape.begin()};
    fail(&p, fmt::format("dimension 0 of tensor {} is not positive (shape {})", shown(t.name), dims_text(t.shape)),
         "zero-size tensors are accepted only as operator intermediates");
  }
}

void Reader::check_operator_outputs(const Subgraph& sg, const Path* at) const {
  using B = BuiltinOperator;
  for (std::size_t i = 0; i < sg.operators.size(); ++i) {
    const Operator& op = sg.operators[i];
    const Path op_path{at, "operators", static_cast<std::int64_t>(i)};
    // Every operator writes something (only the variable and init operators exist for their effect);
    // one without an output would vanish from the lowered graph.
    const bool none = std::none_of(op.outputs.begin(), op.outputs.end(), [](std::int32_t t) { return t >= 0; });
    if (none && op.code != B::ASSIGN_VARIABLE && op.code != B::CALL_ONCE) {
      const Path p{&op_path, "outputs"};
      fail(&p, fmt::format("the {} operator has no output tensor", operator_name(op.code)), "a corrupt model");
    }
    // A reshape keeps the element count: input 0 and output 0 must hold as many elements.
    if ((op.code == B::RESHAPE || op.code == B::SQUEEZE || op.code == B::EXPAND_DIMS) && !op.inputs.empty() &&
        op.inputs[0] >= 0 && !op.outputs.empty() && op.outputs[0] >= 0) {
      const Tensor& in = sg.tensors[static_cast<std::size_t>(op.inputs[0])];
      const Tensor& out = sg.tensors[static_cast<std::size_t>(op.outputs[0])];
      if (in.element_count() != out.element_count()) {
        const Path p{&op_path, "outputs", 0};
        fail(&p, fmt::format("the {} operator turns tensor {} of shape {} ({} elements) into tensor {} of shape {} ({} elements)",
                             operator_name(op.code), shown(in.name), dims_text(in.shape), in.element_count(),
                             shown(out.name), dims_text(out.shape), out.element_count()),
             "a reshape keeps the number of elements; a corrupt model");
      }
      // Its new_shape option (one entry may be -1: the rest) must describe that many elements too.
      const auto* ro = std::get_if<ReshapeOptions>(&op.options);
      if (ro != nullptr && ro->new_shape && !ro->new_shape->empty()) {
        std::int64_t known = 1;
        int unknown = 0;
        bool bad = false;
        for (const std::int32_t d : *ro->new_shape) {
          if (d == -1) {
            ++unknown;
          } else if (d < 0 || (d > 0 && known > limits_.max_elements / d)) {
            bad = true;
          } else {
            known *= d;
          }
        }
        const std::int64_t n = out.element_count();
        bad = bad || unknown > 1 || (unknown == 0 && known != n) || (unknown == 1 && (known == 0 || n % known != 0));
        if (bad) {
          const Path p{&op_path, "builtin_options.new_shape"};
          fail(&p, fmt::format("new_shape {} does not describe the {} elements of output tensor {} {}", dims_text(*ro->new_shape), n,
                               shown(out.name), dims_text(out.shape)),
               "a corrupt model");
        }
      }
    }
  }
}

void Reader::check_graph(const Subgraph& sg, const Path* at) const {
  const std::size_t n_ops = sg.operators.size();
  auto tensor_label = [&](std::int32_t t) {
    return fmt::format("tensor {} ({})", t, shown(sg.tensors[static_cast<std::size_t>(t)].name));
  };

  // One producer per tensor; no operator reads its own output.
  std::vector<std::int32_t> producer(sg.tensors.size(), -1);
  for (std::size_t i = 0; i < n_ops; ++i) {
    const Operator& op = sg.operators[i];
    const Path op_path{at, "operators", static_cast<std::int64_t>(i)};
    for (std::size_t j = 0; j < op.outputs.size(); ++j) {
      const std::int32_t t = op.outputs[j];
      if (t < 0) continue;
      const Path p{&op_path, "outputs", static_cast<std::int64_t>(j)};
      if (std::find(op.inputs.begin(), op.inputs.end(), t) != op.inputs.end()) {
        fail(&p, fmt::format("the {} operator reads its own output {}", operator_name(op.code), tensor_label(t)),
             "a TFLite graph must be acyclic");
      }
      auto& prod = producer[static_cast<std::size_t>(t)];
      if (prod >= 0) {
        fail(&p, fmt::format("{} is already written by operators[{}]", tensor_label(t), prod),
             "every tensor has at most one producer");
      }
      prod = static_cast<std::int32_t>(i);
    }
  }

  // Kahn's algorithm over the operators; edges run producer -> consumer through tensors.
  std::vector<std::uint32_t> pending(n_ops, 0), first(n_ops + 1, 0);
  for (std::size_t i = 0; i < n_ops; ++i) {
    for (const std::int32_t t : sg.operators[i].inputs) {
      if (t >= 0 && producer[static_cast<std::size_t>(t)] >= 0) {
        ++pending[i];
        ++first[static_cast<std::size_t>(producer[static_cast<std::size_t>(t)]) + 1];
      }
    }
  }
  for (std::size_t i = 0; i < n_ops; ++i) first[i + 1] += first[i];
  std::vector<std::uint32_t> consumers(first[n_ops]), fill(first.begin(), first.end() - 1);
  for (std::size_t i = 0; i < n_ops; ++i) {
    for (const std::int32_t t : sg.operators[i].inputs) {
      if (t >= 0 && producer[static_cast<std::size_t>(t)] >= 0) {
        consumers[fill[static_cast<std::size_t>(producer[static_cast<std::size_t>(t)])]++] = static_cast<std::uint32_t>(i);
      }
    }
  }
  std::vector<std::uint32_t> ready;
  std::vector<char> done(n_ops, 0);
  for (std::size_t i = 0; i < n_ops; ++i) {
    if (pending[i] == 0) ready.push_back(static_cast<std::uint32_t>(i));
  }
  std::size_t ordered = 0;
  while (!ready.empty()) {
    const std::uint32_t i = ready.back();
    ready.pop_back();
    done[i] = 1;
    ++ordered;
    for (std::uint32_t k = first[i]; k < first[i + 1]; ++k) {
      if (--pending[consumers[k]] == 0) ready.push_back(consumers[k]);
    }
  }
  if (ordered == n_ops) return;

  // Every operator left over has a left-over producer: walk backwards until an operator repeats.
  std::size_t start = 0;
  while (done[start]) ++start;
  std::vector<std::size_t> walk{start};
  std::vector<std::int32_t> via;
  std::vector<std::int64_t> seen_at(n_ops, -1);
  seen_at[start] = 0;
  for (;;) {
    const Operator& op = sg.operators[walk.back()];
    std::size_t next = n_ops;
    std::int32_t tensor = -1;
    for (const std::int32_t t : op.inputs) {
      if (t >= 0 && producer[static_cast<std::size_t>(t)] >= 0 && !done[static_cast<std::size_t>(producer[static_cast<std::size_t>(t)])]) {
        next = static_cast<std::size_t>(producer[static_cast<std::size_t>(t)]);
        tensor = t;
        break;
      }
    }
    NPUMAP_ASSERT(next < n_ops);
    via.push_back(tensor);
    if (seen_at[next] >= 0) {
      // walk[seen_at[next]] ... walk.back() <- next: reverse to producer -> consumer order.
      std::string ops = fmt::format("operators[{}]", next);
      std::string tensors;
      for (auto k = static_cast<std::int64_t>(walk.size()) - 1; k >= seen_at[next]; --k) {
        ops += fmt::format(" -> operators[{}]", walk[static_cast<std::size_t>(k)]);
        tensors += fmt::format("{}{}", tensors.empty() ? "" : ", ", via[static_cast<std::size_t>(k)]);
      }
      fail(at, fmt::format("the operators form a cycle: {} (through tensors {})", ops, tensors),
           "a TFLite graph must be acyclic");
    }
    seen_at[next] = static_cast<std::int64_t>(walk.size());
    walk.push_back(next);
  }
}

}  // namespace

Model read_model_bytes(std::string bytes, const std::string& name, const ReadLimits& limits) {
  if (bytes.size() > limits.max_file_bytes) {
    throw UserError(SourceLocation{name, 0, 0}, "",
                    fmt::format("the file is {} bytes, more than the limit of {} bytes", bytes.size(), limits.max_file_bytes));
  }
  // Moving keeps the heap block (16-byte aligned), so the offset-based alignment checks of the
  // verifier also make every scalar load aligned.
  auto shared = std::make_shared<const std::string>(std::move(bytes));
  Reader reader(name, reinterpret_cast<const std::uint8_t*>(shared->data()), shared->size(), limits);
  return reader.read(std::move(shared));
}

common::InputLimit tflite_input_limit(const ReadLimits& limits) {
  const std::size_t b = limits.max_file_bytes;
  return {b, fmt::format(".tflite models are limited to {}", b % (1u << 20) == 0 ? fmt::format("{} MiB", b >> 20) : fmt::format("{} bytes", b))};
}

Model read_model(const std::string& path, const ReadLimits& limits) {
  const common::InputLimit limit = tflite_input_limit(limits);
  return read_model_bytes(common::read_input(path, [&](std::string_view) { return limit; }), common::input_display_name(path), limits);
}

}  // namespace npumap::tflite
