#pragma once
// Test helper: writes small .tflite flatbuffers by hand with flatbuffers::FlatBufferBuilder, table by
// table and field id by field id (TFLITE_FORMAT.md), from plain "spec" structs. Every given field is
// written even when it equals the schema default (ForceDefaults), so tests see exactly what they set.
// Entry points: ModelSpec (+ TensorSpec, OperatorSpec, BufferSpec, OpCodeSpec, OptionsSpec, Field
// helpers i8/u8/i32/f32/boolean/vec_i32), build_model(), build_with_external_buffer(),
// find_bytes(), put_u32().

#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <flatbuffers/flatbuffers.h>

namespace npumap::tflite::testing {

/// One scalar or int-vector field of an options (or other) table, by field id.
struct Field {
  enum class Kind { I8, U8, I32, U32, F32, U64, VecI32 };
  Kind kind = Kind::I32;
  int id = 0;
  std::int64_t i = 0;
  float f = 0.0f;
  std::vector<std::int32_t> vec;
};
inline Field i8(int id, std::int64_t v) { return {Field::Kind::I8, id, v, 0.0f, {}}; }
inline Field u8(int id, std::int64_t v) { return {Field::Kind::U8, id, v, 0.0f, {}}; }
inline Field boolean(int id, bool v) { return {Field::Kind::U8, id, v ? 1 : 0, 0.0f, {}}; }
inline Field i32(int id, std::int64_t v) { return {Field::Kind::I32, id, v, 0.0f, {}}; }
inline Field u32(int id, std::int64_t v) { return {Field::Kind::U32, id, v, 0.0f, {}}; }
inline Field u64(int id, std::int64_t v) { return {Field::Kind::U64, id, v, 0.0f, {}}; }
inline Field f32(int id, float v) { return {Field::Kind::F32, id, 0, v, {}}; }
inline Field vec_i32(int id, std::vector<std::int32_t> v) { return {Field::Kind::VecI32, id, 0, 0.0f, std::move(v)}; }

/// builtin_options: union member `type` and the fields of its table (`table` = false writes only the type).
struct OptionsSpec {
  std::uint8_t type = 0;
  std::vector<Field> fields;
  bool table = true;
};

struct QuantSpec {
  std::vector<float> scale;
  std::vector<std::int64_t> zero_point;
  std::int32_t quantized_dimension = 0;
  std::vector<float> min, max;
};

struct TensorSpec {
  std::string name;
  std::vector<std::int32_t> shape;
  std::int8_t type = 9;  // INT8
  std::uint32_t buffer = 0;
  std::optional<QuantSpec> quant;
  bool is_variable = false;
  std::optional<std::vector<std::int32_t>> shape_signature;
  std::vector<Field> extra;  // any further raw fields (e.g. has_rank, external_buffer)
};

struct OperatorSpec {
  std::uint32_t opcode_index = 0;
  std::vector<std::int32_t> inputs, outputs, intermediates;
  OptionsSpec options;
  std::vector<std::uint8_t> custom_options;
  std::vector<Field> extra;  // e.g. large_custom_options_offset/size
};

struct BufferSpec {
  std::vector<std::uint8_t> data;
  std::optional<std::uint64_t> offset, size;  // out-of-flatbuffer data (Buffer fields 1 and 2)
};

struct OpCodeSpec {
  std::int32_t builtin = 0;
  std::optional<std::int8_t> deprecated;  // default: min(builtin, 127), as the TFLite converter writes
  std::string custom_code;
  std::int32_t version = 1;
};

struct SubgraphSpec {
  std::vector<TensorSpec> tensors;
  std::vector<std::int32_t> inputs, outputs;
  std::vector<OperatorSpec> operators;
  std::string name = "main";
};

struct ModelSpec {
  std::uint32_t version = 3;
  std::string description = "hand-built test model";
  std::vector<OpCodeSpec> operator_codes;
  std::vector<SubgraphSpec> subgraphs;
  std::vector<BufferSpec> buffers{BufferSpec{}};  // buffer 0: the empty sentinel
  std::vector<std::pair<std::string, std::uint32_t>> metadata;
};

namespace detail {

inline flatbuffers::voffset_t slot(int id) { return static_cast<flatbuffers::voffset_t>(4 + 2 * id); }

using Raw = flatbuffers::Offset<void>;

inline Raw table(flatbuffers::FlatBufferBuilder& b, const std::vector<Field>& fields,
                 const std::vector<std::pair<int, Raw>>& offsets = {}) {
  std::vector<flatbuffers::Offset<flatbuffers::Vector<std::int32_t>>> vecs(fields.size());
  for (std::size_t k = 0; k < fields.size(); ++k) {
    if (fields[k].kind == Field::Kind::VecI32) vecs[k] = b.CreateVector(fields[k].vec);
  }
  const auto start = b.StartTable();
  for (const auto& [id, off] : offsets) {
    if (!off.IsNull()) b.AddOffset(slot(id), off);
  }
  for (std::size_t k = 0; k < fields.size(); ++k) {
    const Field& f = fields[k];
    switch (f.kind) {
      case Field::Kind::I8: b.AddElement<std::int8_t>(slot(f.id), static_cast<std::int8_t>(f.i), 0); break;
      case Field::Kind::U8: b.AddElement<std::uint8_t>(slot(f.id), static_cast<std::uint8_t>(f.i), 0); break;
      case Field::Kind::I32: b.AddElement<std::int32_t>(slot(f.id), static_cast<std::int32_t>(f.i), 0); break;
      case Field::Kind::U32: b.AddElement<std::uint32_t>(slot(f.id), static_cast<std::uint32_t>(f.i), 0); break;
      case Field::Kind::U64: b.AddElement<std::uint64_t>(slot(f.id), static_cast<std::uint64_t>(f.i), 0); break;
      case Field::Kind::F32: b.AddElement<float>(slot(f.id), f.f, 0.0f); break;
      case Field::Kind::VecI32: b.AddOffset(slot(f.id), vecs[k]); break;
    }
  }
  return Raw(b.EndTable(start));
}

template <class T>
Raw vec(flatbuffers::FlatBufferBuilder& b, const std::vector<T>& v) {
  return Raw(b.CreateVector(v).o);
}

inline Raw tables(flatbuffers::FlatBufferBuilder& b, const std::vector<Raw>& v) { return Raw(b.CreateVector(v).o); }

inline Raw tensor(flatbuffers::FlatBufferBuilder& b, const TensorSpec& t) {
  Raw quant;
  if (t.quant) {
    const QuantSpec& q = *t.quant;
    std::vector<std::pair<int, Raw>> offs;
    if (!q.min.empty()) offs.emplace_back(0, vec(b, q.min));
    if (!q.max.empty()) offs.emplace_back(1, vec(b, q.max));
    if (!q.scale.empty()) offs.emplace_back(2, vec(b, q.scale));
    if (!q.zero_point.empty()) offs.emplace_back(3, vec(b, q.zero_point));
    quant = table(b, {i32(6, q.quantized_dimension)}, offs);
  }
  std::vector<std::pair<int, Raw>> offs{{0, vec(b, t.shape)}, {3, Raw(b.CreateString(t.name).o)}, {4, quant}};
  if (t.shape_signature) offs.emplace_back(7, vec(b, *t.shape_signature));
  std::vector<Field> fields{i8(1, t.type), u32(2, t.buffer), boolean(5, t.is_variable)};
  fields.insert(fields.end(), t.extra.begin(), t.extra.end());
  return table(b, fields, offs);
}

inline Raw op(flatbuffers::FlatBufferBuilder& b, const OperatorSpec& o) {
  Raw options;
  if (o.options.type != 0 && o.options.table) options = table(b, o.options.fields);
  std::vector<std::pair<int, Raw>> offs{{1, vec(b, o.inputs)}, {2, vec(b, o.outputs)}, {4, options}};
  if (!o.intermediates.empty()) offs.emplace_back(8, vec(b, o.intermediates));
  if (!o.custom_options.empty()) offs.emplace_back(5, vec(b, o.custom_options));
  std::vector<Field> fields{u32(0, o.opcode_index), u8(3, o.options.type)};
  fields.insert(fields.end(), o.extra.begin(), o.extra.end());
  return table(b, fields, offs);
}

}  // namespace detail

/// The .tflite bytes of `spec` (file identifier `identifier`).
inline std::string build_model(const ModelSpec& spec, const char* identifier = "TFL3") {
  using detail::Raw;
  flatbuffers::FlatBufferBuilder b(1024);
  b.ForceDefaults(true);

  std::vector<Raw> buffers;
  for (const BufferSpec& buf : spec.buffers) {
    Raw data;
    if (!buf.data.empty()) {
      b.ForceVectorAlignment(buf.data.size(), 1, 16);  // Buffer.data is force_align 16
      data = detail::vec(b, buf.data);
    }
    std::vector<Field> fields;
    if (buf.offset) fields.push_back(u64(1, static_cast<std::int64_t>(*buf.offset)));
    if (buf.size) fields.push_back(u64(2, static_cast<std::int64_t>(*buf.size)));
    buffers.push_back(detail::table(b, fields, {{0, data}}));
  }
  std::vector<Raw> codes;
  for (const OpCodeSpec& c : spec.operator_codes) {
    const std::int8_t dep = c.deprecated ? *c.deprecated : static_cast<std::int8_t>(c.builtin < 127 ? c.builtin : 127);
    Raw custom;
    if (!c.custom_code.empty()) custom = Raw(b.CreateString(c.custom_code).o);
    codes.push_back(detail::table(b, {i8(0, dep), i32(2, c.version), i32(3, c.builtin)}, {{1, custom}}));
  }
  std::vector<Raw> subgraphs;
  for (const SubgraphSpec& sg : spec.subgraphs) {
    std::vector<Raw> tensors, ops;
    for (const TensorSpec& t : sg.tensors) tensors.push_back(detail::tensor(b, t));
    for (const OperatorSpec& o : sg.operators) ops.push_back(detail::op(b, o));
    const Raw tv = detail::tables(b, tensors), ov = detail::tables(b, ops);
    const Raw in = detail::vec(b, sg.inputs), out = detail::vec(b, sg.outputs);
    const Raw name(b.CreateString(sg.name).o);
    subgraphs.push_back(detail::table(b, {}, {{0, tv}, {1, in}, {2, out}, {3, ov}, {4, name}}));
  }
  std::vector<Raw> metadata;
  for (const auto& [name, buffer] : spec.metadata) {
    const Raw n(b.CreateString(name).o);
    metadata.push_back(detail::table(b, {u32(1, buffer)}, {{0, n}}));
  }
  const Raw codes_v = detail::tables(b, codes), subgraphs_v = detail::tables(b, subgraphs),
            buffers_v = detail::tables(b, buffers), metadata_v = detail::tables(b, metadata);
  const Raw description(b.CreateString(spec.description).o);
  const Raw root = detail::table(b, {u32(0, spec.version)},
                                 {{1, codes_v}, {2, subgraphs_v}, {3, description}, {4, buffers_v}, {6, metadata_v}});
  b.Finish(root, identifier);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

/// `spec` with buffers[buffer_index] stored outside the flatbuffer: the data follows the flatbuffer
/// (16-byte aligned) and the Buffer table holds its offset and size.
inline std::string build_with_external_buffer(ModelSpec spec, std::size_t buffer_index, const std::vector<std::uint8_t>& data) {
  spec.buffers.at(buffer_index) = BufferSpec{{}, std::uint64_t{0xFFFFFFFF}, data.size()};
  const std::size_t probe = build_model(spec).size();  // the field widths do not depend on the values
  const std::size_t offset = (probe + 15) / 16 * 16;
  spec.buffers[buffer_index].offset = offset;
  std::string bytes = build_model(spec);
  if (bytes.size() != probe) throw std::logic_error("build_with_external_buffer: size changed between passes");
  bytes.resize(offset, '\0');
  bytes.append(reinterpret_cast<const char*>(data.data()), data.size());
  return bytes;
}

/// Position of the first occurrence of `pattern` in `bytes` (throws if absent: a test-setup error).
inline std::size_t find_bytes(const std::string& bytes, const std::string& pattern) {
  const std::size_t at = bytes.find(pattern);
  if (at == std::string::npos) throw std::logic_error("find_bytes: pattern not found");
  return at;
}

/// Little-endian u32/i32 as 4 bytes, for patterns and patches.
inline std::string le32(std::uint32_t v) {
  std::string s(4, '\0');
  for (int k = 0; k < 4; ++k) s[static_cast<std::size_t>(k)] = static_cast<char>((v >> (8 * k)) & 0xff);
  return s;
}

/// Overwrites 4 bytes at `at` with little-endian `v`.
inline void put_u32(std::string& bytes, std::size_t at, std::uint32_t v) { bytes.replace(at, 4, le32(v)); }

}  // namespace npumap::tflite::testing
