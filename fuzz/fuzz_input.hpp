#pragma once
// Shared by the libFuzzer harnesses (fuzz/*.cpp): an input as text or as a file. The readers under
// test take either a string or a path; a path-taking reader gets the bytes in a per-process scratch
// file, rewritten for every input (the reader must not depend on anything but those bytes).

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include <unistd.h>

namespace npumap::fuzz {

/// The fuzz input as a string.
inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// Writes the input to a scratch file named after the process and `ext` (".json", ".yaml"); returns its path.
inline std::string scratch_file(const std::uint8_t* data, std::size_t size, const std::string& ext) {
  const char* dir = std::getenv("TMPDIR");
  const std::string path = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/npumap-fuzz-" +
                           std::to_string(static_cast<long>(::getpid())) + ext;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

}  // namespace npumap::fuzz
